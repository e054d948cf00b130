// Command rueidislock-lock runs rueidislock (github.com/redis/rueidis/rueidislock)
// behind stockbench's adapter protocol, at whatever version this module's go.mod
// requires (--lock-go github.com/redis/rueidis@VERSION builds it at another). A try is
// TryWithContext on a Locker whose KeyValidity is the sale's TTL; release is the
// returned cancel. The library extends a held lock itself every ExtendInterval and
// cancels the returned context once the lock is not held any more: asked whether a
// lease is still held (right before its holder writes), and at a renew, it answers
// whether that context is still live, as a holder checks ctx.Err() before it writes.
// Its keys are KeyPrefix:i:NAME, the prefix being the sale's lock key so that the run
// deletes them.
//
// Flags:
//
//	--key-majority N    keys of 2N-1 that make a lock (default 1, the README's "if you
//	                    have only one Redis instance"; the library's own default is 2)
//	--no-loop-tracking  CLIENT TRACKING with NOLOOP (Redis 7.0.5 and later)
//	--no-cache          ClientOption.DisableCache: no client-side caching
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"time"

	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/stockbench/stockbench/adapters/go/protocol"
)

func main() {
	majority := flag.Int("key-majority", 1, "keys of 2N-1 that make a lock")
	noLoop := flag.Bool("no-loop-tracking", false, "CLIENT TRACKING with NOLOOP (Redis 7.0.5 and later)")
	noCache := flag.Bool("no-cache", false, "no client-side caching (ClientOption.DisableCache)")
	flag.Parse()
	protocol.Main(func(h protocol.Hello) (protocol.Handler, []string, map[string][]string, error) {
		prefix, _ := h.Keys["lock"].(string)
		if prefix == "" {
			return nil, nil, nil, errors.New("hello names no lock key")
		}
		o := clientOption(h.Redis)
		o.DisableCache = *noCache
		// A Locker keeps one validity: one per TTL the sale asks for, made on first use.
		lockers := map[int64]rueidislock.Locker{}
		locker := func(ttlMs int64) (rueidislock.Locker, error) {
			if l, ok := lockers[ttlMs]; ok {
				return l, nil
			}
			l, err := rueidislock.NewLocker(rueidislock.LockerOption{ClientOption: o, KeyPrefix: prefix,
				KeyValidity: time.Duration(ttlMs) * time.Millisecond, KeyMajority: int32(*majority), NoLoopTracking: *noLoop})
			if err != nil {
				return nil, fmt.Errorf("connect: %w", err)
			}
			lockers[ttlMs] = l
			return l, nil
		}
		if _, err := locker(h.TTLms); err != nil {
			return nil, nil, nil, err
		}
		leases := map[string]held{}
		h.Defer(func() { closeAll(lockers, leases) })
		serial := 0
		handle := func(ctx context.Context, req protocol.Request) (protocol.Reply, error) {
			switch req.Op {
			case "try":
				l, err := locker(req.TTLms)
				if err != nil {
					return nil, err
				}
				lctx, cancel, err := l.TryWithContext(context.Background(), req.Key)
				// A key's SET not answered within TryNextAfter (20 ms) fails the try with
				// DeadlineExceeded: the library counts it failed, and so do we.
				if errors.Is(err, rueidislock.ErrNotLocked) || errors.Is(err, context.DeadlineExceeded) {
					return protocol.Reply{"granted": false}, nil
				}
				if err != nil {
					return nil, err
				}
				serial++
				lease := fmt.Sprintf("l%d", serial)
				leases[lease] = held{lctx, cancel}
				return protocol.Reply{"granted": true, "lease": lease}, nil
			case "renew", "held":
				// "The returned ctx will be canceled automatically and immediately once the
				// KeyMajority is not held anymore" (rueidislock/README.md, v1.0.79): a
				// holder checks ctx.Err() before it writes.
				l, ok := leases[req.Lease]
				live := ok && l.ctx.Err() == nil
				if req.Op == "held" {
					return protocol.Reply{"held": live}, nil
				}
				return protocol.Reply{"renewed": live}, nil
			case "release":
				l, ok := leases[req.Lease]
				delete(leases, req.Lease)
				if !ok {
					return protocol.Reply{"released": false}, nil
				}
				live := l.ctx.Err() == nil
				l.cancel()
				return protocol.Reply{"released": live}, nil
			}
			return nil, fmt.Errorf("unknown op %s", req.Op)
		}
		return handle, []string{"lock", "renew", "ms", "held", "sentinel"}, documented(), nil
	})
}

// clientOption is how a Go service would connect rueidis to the server hello names:
// through its sentinels, to a cluster's seeds (rueidis finds a cluster itself), or to
// addr.
func clientOption(w protocol.Where) rueidis.ClientOption {
	o := rueidis.ClientOption{InitAddress: []string{w.Addr}, Username: w.Username, Password: w.Password, SelectDB: w.DB,
		Dialer: net.Dialer{Timeout: time.Second}, ConnWriteTimeout: 2 * time.Second}
	switch {
	case w.Sentinel != nil:
		o.InitAddress, o.Sentinel = w.Sentinel.Addrs, rueidis.SentinelOption{MasterSet: w.Sentinel.Master}
	case len(w.Cluster) > 0:
		o.InitAddress = w.Cluster
	}
	return o
}

// held is a lock granted: its context, which the library cancels once the lock is not
// held, and the cancel that releases it.
type held struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// closeAll ends a sale: every lock still held released, every locker closed.
func closeAll(lockers map[int64]rueidislock.Locker, leases map[string]held) {
	for _, l := range leases {
		l.cancel()
	}
	for _, l := range lockers {
		l.Close()
	}
}
