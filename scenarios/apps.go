package scenarios

import (
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Application instances. Buyers reach Redis through the application that serves them,
// and in production that is several instances behind a load balancer, each with its own
// connection pool: a sale with Apps > 1 gives each instance a pool of Conns connections
// of its own, opened like the ones it was given (the same servers, the same path through
// the network), and its own copy of the design.

// appClients returns the buyers' clients of n application instances: r's own for the
// first, and fresh pools of the same servers for the others (of the lock servers, through
// paths of their own where r opens them: AppLocks); the second result is the clients it
// opened, for the caller to close.
func appClients(r Redis, n int) ([]Redis, []redis.UniversalClient, error) {
	apps := []Redis{r}
	var opened []redis.UniversalClient
	for i := range n - 1 {
		copies := make(map[redis.UniversalClient]redis.UniversalClient)
		if r.AppLocks != nil { // paths of the instance's own, a fault may cut
			own, err := r.AppLocks(i + 1)
			if err != nil {
				closeClients(opened)
				return nil, nil, err
			}
			for j, l := range r.Locks {
				copies[l] = own[j]
			}
		}
		again := func(c redis.UniversalClient) (redis.UniversalClient, error) {
			if d, ok := copies[c]; ok {
				return d, nil
			}
			d, err := anotherPool(c)
			if err != nil {
				return nil, err
			}
			copies[c] = d
			opened = append(opened, d)
			return d, nil
		}
		a := r
		var err error
		if a.Stock, err = again(r.Stock); err != nil {
			closeClients(opened)
			return nil, nil, err
		}
		a.Locks = make([]redis.UniversalClient, len(r.Locks))
		for j, l := range r.Locks {
			if a.Locks[j], err = again(l); err != nil {
				closeClients(opened)
				return nil, nil, err
			}
		}
		apps = append(apps, a)
	}
	return apps, opened, nil
}

// anotherPool opens a client with c's options: another pool of the same size to the
// same server.
func anotherPool(c redis.UniversalClient) (redis.UniversalClient, error) {
	switch c := c.(type) {
	case *redis.Client:
		o := *c.Options()
		return redis.NewClient(&o), nil
	case *redis.ClusterClient:
		o := *c.Options()
		return redis.NewClusterClient(&o), nil
	}
	return nil, fmt.Errorf("apps: cannot open another pool like a %T; run with one app", c)
}

func closeClients(cs []redis.UniversalClient) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
