// Command redsync-lock runs go-redsync/redsync's Mutex on one Redis behind stockbench's
// adapter protocol, at whatever version this module's go.mod requires: so that a version
// other than stockbench's own (its built-in redsync design) can be judged beside it. Each
// try is one attempt (WithTries(1)), each attempt given half the TTL (WithTimeoutFactor),
// as the built-in design takes it; release is Unlock.
package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/stockbench/stockbench/adapters/go/protocol"
)

// documented is what the built-in redsync design documents: safe while holders live
// inside the TTL, a late write whenever the key goes from under a live holder.
var documented = map[string][]string{
	"none": {"SAFE"}, "crash-acquire": {"SAFE"}, "crash-holder": {"SAFE"}, "net-latency": {"SAFE"},
	"term-holder": {"SAFE"}, // SIGTERM stops a Go program at once: a dead holder
	"slow-work":   lateWrite, "cpu-starve": lateWrite, "client-pause": lateWrite, "redis-restart": lateWrite, "failover": lateWrite,
	"clock-jump": lateWrite, "net-timeout": lateWrite,
	// Eviction takes the key from a holder inside its lease: the second holder's write
	// may land first, both inside their leases (LOCK-BROKEN 4 once in make test).
	"evict": {"OVERSOLD", "LOST", "LOCK-BROKEN"},
}

var lateWrite = []string{"OVERSOLD", "LOST"}

func main() {
	protocol.Main(func(h protocol.Hello) (protocol.Handler, []string, map[string][]string, error) {
		c := protocol.Client(h.Redis)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := c.Ping(ctx).Err(); err != nil {
			return nil, nil, nil, fmt.Errorf("connect: %w", err)
		}
		rs := redsync.New(goredis.NewPool(c))
		leases := map[string]*redsync.Mutex{}
		serial := 0
		handle := func(ctx context.Context, req protocol.Request) (protocol.Reply, error) {
			switch req.Op {
			case "try":
				m := rs.NewMutex(req.Key, redsync.WithExpiry(time.Duration(req.TTLms)*time.Millisecond),
					redsync.WithTries(1), redsync.WithTimeoutFactor(0.5))
				err := m.LockContext(ctx) // with one try: one attempt, as TryLock in later versions
				if errors.Is(err, redsync.ErrFailed) || isTaken(err) {
					return protocol.Reply{"granted": false}, nil
				}
				if err != nil {
					return nil, err
				}
				serial++
				lease := fmt.Sprintf("l%d", serial)
				leases[lease] = m
				return protocol.Reply{"granted": true, "lease": lease}, nil
			case "release":
				m, ok := leases[req.Lease]
				delete(leases, req.Lease)
				if !ok {
					return protocol.Reply{"released": false}, nil
				}
				released, err := m.UnlockContext(ctx)
				if err != nil && !released {
					return protocol.Reply{"released": false}, nil // not held any more
				}
				return protocol.Reply{"released": released}, nil
			}
			return nil, fmt.Errorf("unknown op %s", req.Op)
		}
		return handle, []string{"lock"}, documented, nil
	})
}

// isTaken reports whether err says the attempt failed rather than the server: the lock
// another holds (ErrTaken, a value in some versions and a pointer in others), or the
// attempt's own share of the TTL run out (the library counts it failed, and so do we).
func isTaken(err error) bool {
	var taken redsync.ErrTaken
	var takenPtr *redsync.ErrTaken
	return errors.As(err, &taken) || errors.As(err, &takenPtr) || errors.Is(err, context.DeadlineExceeded)
}
