package lockimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SeedSetNX is a literal Go port of the classic PHP flash-sale lock, kept with both of its
// flaws because showing them is the point:
//
//  1. It stores an expiry timestamp and then passes that timestamp to EXPIRE, which takes
//     a number of seconds: the lock lives for about 56 years, so a holder that dies
//     without releasing leaves it stuck.
//  2. When SETNX fails and TTL is negative it assumes the holder died and takes the lock
//     with a plain SET. A negative TTL is also what every holder shows between its own
//     SETNX and EXPIRE, so under contention a second buyer steals a live lock.
//
// Release is DEL without an owner check.
type SeedSetNX struct {
	Client redis.Cmdable
}

var (
	_ Locker     = SeedSetNX{}
	_ HalfLocker = SeedSetNX{}
)

// HalfLock implements [HalfLocker]: the SETNX without its EXPIRE.
func (s SeedSetNX) HalfLock(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	return s.Client.SetNX(ctx, key, time.Now().Add(ttl).Unix(), 0).Result()
}

// TryLock implements [Locker].
func (s SeedSetNX) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	expireAt := time.Now().Add(ttl).Unix()
	ok, err := s.Client.SetNX(ctx, key, expireAt, 0).Result()
	if err != nil {
		return nil, fmt.Errorf("seed-setnx: setnx: %w", err)
	}
	if !ok {
		left, err := s.Client.TTL(ctx, key).Result()
		if err != nil {
			return nil, fmt.Errorf("seed-setnx: ttl: %w", err)
		}
		if left >= 0 {
			return nil, ErrNotAcquired
		}
		if err := s.Client.Set(ctx, key, expireAt, 0).Err(); err != nil {
			return nil, fmt.Errorf("seed-setnx: set: %w", err)
		}
	}
	if err := s.Client.Expire(ctx, key, time.Duration(expireAt)*time.Second).Err(); err != nil {
		return nil, fmt.Errorf("seed-setnx: expire: %w", err)
	}
	return delLease{s.Client, key}, nil
}

// delLease releases with a bare DEL, whoever holds the key by then.
type delLease struct {
	client redis.Cmdable
	key    string
}

func (l delLease) Release(ctx context.Context) error {
	if err := l.client.Del(ctx, l.key).Err(); err != nil {
		return fmt.Errorf("lockimpl: release %s: del: %w", l.key, err)
	}
	return nil
}
