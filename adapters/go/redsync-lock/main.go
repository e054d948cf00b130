// Command redsync-lock runs go-redsync/redsync's Mutex behind stockbench's adapter
// protocol, at whatever version this module's go.mod requires: so that a version other
// than stockbench's own (its built-in redsync and redlock designs) can be judged beside
// it. It takes the lock servers hello names: one, or Redlock's majority of several
// (it supports nodes: stockbench --adapter-nodes 5). Each try is one attempt
// (WithTries(1)), each attempt given half the TTL (WithTimeoutFactor), as the built-in
// designs take it; release is Unlock. Before each write its holder asks the mutex's
// Until(), the library's own "time of validity of acquired lock" (mutex.go), against
// time.Now(): local, no round trip, as the library's Valid() deprecation says to.
//
// Flags:
//
//	--extend           renew a held lease with Extend when stockbench asks (every TTL/3),
//	                   as a holder that works long keeps its lock
//	--setnx-on-extend  Extend with WithSetNXOnExtend (v4.12.0 and later, go-redsync/redsync
//	                   PR #149): an extend also sets the key again where it is gone
//	--tries N          attempts in one try (WithTries; default 1, the harness retrying),
//	--retry-delay D    WithRetryDelay between them (default redsync's own)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"

	"github.com/stockbench/stockbench/adapters/go/protocol"
)

func main() {
	extend := flag.Bool("extend", false, "renew a held lease with Extend when stockbench asks (every TTL/3)")
	setNX := flag.Bool("setnx-on-extend", false, "Extend with WithSetNXOnExtend (v4.12.0 and later): set the key again where it is gone")
	tries := flag.Int("tries", 1, "attempts in one try (WithTries)")
	retryDelay := flag.Duration("retry-delay", 0, "WithRetryDelay between attempts (default redsync's own)")
	flag.Parse()
	opts := []redsync.Option{redsync.WithTries(max(*tries, 1)), redsync.WithTimeoutFactor(0.5)}
	if *retryDelay > 0 {
		opts = append(opts, redsync.WithRetryDelay(*retryDelay))
	}
	if *setNX {
		opt, ok := setNXOnExtend()
		if !ok {
			fmt.Fprintf(os.Stderr, "redsync-lock: --setnx-on-extend: redsync %s has no WithSetNXOnExtend (v4.12.0 and later; make go-adapters REDSYNC=v4.12.1 builds one)\n", version())
			os.Exit(2)
		}
		opts = append(opts, opt)
	}
	protocol.Main(func(h protocol.Hello) (protocol.Handler, []string, map[string][]string, error) {
		servers := h.Redis.Servers()
		pools := make([]redsyncredis.Pool, len(servers))
		for i, w := range servers {
			c := protocol.Client(w)
			h.Defer(func() { c.Close() })
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := c.Ping(ctx).Err()
			cancel()
			if err != nil {
				return nil, nil, nil, fmt.Errorf("connect to lock server %d: %w", i+1, err)
			}
			pools[i] = goredis.NewPool(c)
		}
		l := &locks{rs: redsync.New(pools...), opts: opts, leases: map[string]*redsync.Mutex{}}
		// ms: go-redis sends a sub-second expiry as PX, redsync extends with PEXPIRE
		supports := []string{"lock", "nodes", "ms", "held", "sentinel"}
		if *extend {
			supports = append(supports, "renew")
		}
		return l.handle, supports, documented(len(servers), *extend, *setNX), nil
	})
}

// locks is one sale's mutexes, by lease.
type locks struct {
	rs     *redsync.Redsync
	opts   []redsync.Option
	leases map[string]*redsync.Mutex
	serial int
}

func (l *locks) handle(ctx context.Context, req protocol.Request) (protocol.Reply, error) {
	switch req.Op {
	case "try":
		m := l.rs.NewMutex(req.Key, append(l.opts, redsync.WithExpiry(time.Duration(req.TTLms)*time.Millisecond))...)
		err := m.LockContext(ctx) // with one try: one attempt, as TryLock in later versions
		if errors.Is(err, redsync.ErrFailed) || isTaken(err) {
			return protocol.Reply{"granted": false}, nil
		}
		if err != nil {
			return nil, err
		}
		l.serial++
		lease := fmt.Sprintf("l%d", l.serial)
		l.leases[lease] = m
		return protocol.Reply{"granted": true, "lease": lease}, nil
	case "renew":
		m, ok := l.leases[req.Lease]
		if !ok {
			return protocol.Reply{"renewed": false}, nil
		}
		renewed, err := m.ExtendContext(ctx)
		return protocol.Reply{"renewed": renewed && err == nil}, nil
	case "held":
		m, ok := l.leases[req.Lease]
		return protocol.Reply{"held": ok && time.Now().Before(m.Until())}, nil
	case "release":
		m, ok := l.leases[req.Lease]
		delete(l.leases, req.Lease)
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

// isTaken reports whether err says the attempt failed rather than the server: the lock
// another holds (ErrTaken, a value in some versions and a pointer in others), or the
// attempt's own share of the TTL run out (the library counts it failed, and so do we).
func isTaken(err error) bool {
	var taken redsync.ErrTaken
	var takenPtr *redsync.ErrTaken
	return errors.As(err, &taken) || errors.As(err, &takenPtr) || errors.Is(err, context.DeadlineExceeded)
}

// version is the redsync release this binary was built with.
func version() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/go-redsync/redsync/v4" {
				return d.Version
			}
		}
	}
	return "(unknown)"
}
