package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// ErrRedisGone is the cause a sale is stopped with when a server it needs stops
// answering: the run is then incomplete, and what was measured until then is kept.
var ErrRedisGone = errors.New("redis stopped answering")

// How servers are watched during a sale. A refused or reset connection is a dead server
// after goneAfter. A server that answers nothing at all (stopped, frozen, or behind a
// dead container's address) is given frozenAfter: a ping's reply can also wait that
// long for the harness's own goroutines when a million buyers start at once, and a
// false alarm would end a good run.
const (
	pingEvery   = 200 * time.Millisecond
	pingTimeout = 2 * time.Second
	goneAfter   = time.Second
	frozenAfter = 4 * time.Second
)

// watchServers pings each server on a connection of its own, beside the buyers' pools,
// and stops the sale with ErrRedisGone when one stops answering, counting from when
// the faults last had the servers settled (settled: a server being failed over on
// purpose is not gone). Each ping sent is added to pings, so that the sale's command
// counts can leave out the harness's own and keep a design's. unwatch stops the watching
// and closes its connections.
func watchServers(ctx context.Context, stop context.CancelCauseFunc, servers []redis.UniversalClient, settled func() time.Time, pings *atomic.Int64) (unwatch func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, s := range servers {
		c, addr := ownConn(s)
		wg.Go(func() {
			if c != s {
				defer c.Close()
			}
			if err := watch(ctx, c, addr, settled, pings); err != nil {
				stop(err)
			}
		})
	}
	return func() { cancel(); wg.Wait() }
}

// watch pings c until ctx ends, or returns why it stopped answering; it counts its pings
// in sent.
func watch(ctx context.Context, c redis.UniversalClient, addr string, settled func() time.Time, sent *atomic.Int64) (gone error) {
	lastOK := time.Now()
	wait.Every(ctx, pingEvery, func() bool {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err := c.Ping(pctx).Err()
		cancel()
		sent.Add(1)
		if s := settled(); s.After(lastOK) {
			lastOK = s
		}
		switch down := time.Since(lastOK); {
		case err == nil:
			lastOK = time.Now()
		case ctx.Err() != nil:
		case down >= frozenAfter || (down >= goneAfter && !wait.TimedOut(err)):
			gone = fmt.Errorf("%w: %s did not answer for %s: %w", ErrRedisGone, addr, down.Round(100*time.Millisecond), err)
			return false
		}
		return true
	})
	return gone
}

// ownConn returns a client of the same server as c with a pool of one connection, so
// that a ping never waits behind buyers for a pooled one, and the address it reaches.
// A client of a kind it does not know is used as it is.
func ownConn(c redis.UniversalClient) (redis.UniversalClient, string) {
	switch c := c.(type) {
	case *redis.Client:
		o := *c.Options()
		o.PoolSize, o.MaxActiveConns, o.MinIdleConns, o.MaxIdleConns = 1, 1, 0, 1
		o.DialTimeout, o.MaxRetries, o.ContextTimeoutEnabled = time.Second, -1, true
		return redis.NewClient(&o), o.Addr
	case *redis.ClusterClient:
		o := *c.Options()
		o.PoolSize, o.MaxActiveConns, o.MinIdleConns, o.MaxIdleConns = 1, 1, 0, 1
		o.DialTimeout, o.MaxRetries, o.ContextTimeoutEnabled = time.Second, -1, true
		return redis.NewClusterClient(&o), o.Addrs[0]
	}
	return c, "redis"
}
