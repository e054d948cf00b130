// Command redislock-lock runs bsm/redislock behind stockbench's adapter protocol, at
// whatever version this module's go.mod requires (--lock-go
// github.com/bsm/redislock@VERSION builds it at another). Each try is one Obtain, with
// NoRetry unless --retries, as the harness retries; release is Release; a renew is
// Refresh for the sale's TTL; asked whether a lease is still held (right before its
// holder writes), it answers with the lock's TTL, as the README checks it. The key is SET
// NX with a PX lease, so leases below a second are kept.
//
// Flags:
//
//	--refresh    renew a held lease with Refresh when stockbench asks (every TTL/3), as a
//	             holder that works long keeps its lock
//	--retries N  retry an Obtain N times within one try (LimitRetry of a LinearBackoff;
//	             default 0, NoRetry, the harness retrying)
//	--backoff D  the LinearBackoff between them (default 20ms)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/bsm/redislock"

	"github.com/stockbench/stockbench/adapters/go/protocol"
)

func main() {
	refresh := flag.Bool("refresh", false, "renew a held lease with Refresh when stockbench asks (every TTL/3)")
	retries := flag.Int("retries", 0, "retry an Obtain N times within one try (LimitRetry of a LinearBackoff)")
	backoff := flag.Duration("backoff", 20*time.Millisecond, "the LinearBackoff between retries")
	flag.Parse()
	strategy := redislock.NoRetry()
	if *retries > 0 {
		strategy = redislock.LimitRetry(redislock.LinearBackoff(*backoff), *retries)
	}
	protocol.Main(func(h protocol.Hello) (protocol.Handler, []string, map[string][]string, error) {
		c := protocol.Client(h.Redis)
		h.Defer(func() { c.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("connect: %w", err)
		}
		locker := redislock.New(c)
		once := &redislock.Options{RetryStrategy: strategy}
		leases := map[string]*redislock.Lock{}
		serial := 0
		handle := func(ctx context.Context, req protocol.Request) (protocol.Reply, error) {
			ttl := time.Duration(req.TTLms) * time.Millisecond
			switch req.Op {
			case "try":
				l, err := locker.Obtain(ctx, req.Key, ttl, once)
				if errors.Is(err, redislock.ErrNotObtained) {
					return protocol.Reply{"granted": false}, nil
				}
				if err != nil {
					return nil, err
				}
				serial++
				lease := fmt.Sprintf("l%d", serial)
				leases[lease] = l
				return protocol.Reply{"granted": true, "lease": lease}, nil
			case "renew":
				l, ok := leases[req.Lease]
				if !ok {
					return protocol.Reply{"renewed": false}, nil
				}
				err := l.Refresh(ctx, ttl, nil)
				if err != nil && !errors.Is(err, redislock.ErrNotObtained) {
					return nil, err
				}
				return protocol.Reply{"renewed": err == nil}, nil
			case "held":
				return held(ctx, leases[req.Lease])
			case "release":
				l, ok := leases[req.Lease]
				delete(leases, req.Lease)
				if !ok {
					return protocol.Reply{"released": false}, nil
				}
				err := l.Release(ctx)
				if err != nil && !errors.Is(err, redislock.ErrLockNotHeld) {
					return nil, err
				}
				return protocol.Reply{"released": err == nil}, nil
			}
			return nil, fmt.Errorf("unknown op %s", req.Op)
		}
		supports := []string{"lock", "ms", "held", "sentinel"}
		if *refresh {
			supports = append(supports, "renew")
		}
		return handle, supports, documented(*refresh), nil
	})
}

// held is the README's check before going on with the work: "if ttl, err :=
// lock.TTL(ctx) ... else if ttl > 0" (README.md, v0.9.4), a script that reads the key's
// PTTL where it still holds this lock's token. A lease it does not know is not held.
func held(ctx context.Context, l *redislock.Lock) (protocol.Reply, error) {
	if l == nil {
		return protocol.Reply{"held": false}, nil
	}
	ttl, err := l.TTL(ctx)
	if err != nil {
		return nil, err
	}
	return protocol.Reply{"held": ttl > 0}, nil
}
