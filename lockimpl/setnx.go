package lockimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// SetNXExpire takes the lock with SETNX and then sets its TTL with EXPIRE: two round
// trips, so a holder that dies between them leaves a lock without a TTL. The TTL is
// rounded up to whole seconds. Release is DEL without an owner check.
type SetNXExpire struct {
	Client redis.Cmdable
}

var (
	_ Locker     = SetNXExpire{}
	_ HalfLocker = SetNXExpire{}
)

// HalfLock implements [HalfLocker]: the SETNX without its EXPIRE.
func (s SetNXExpire) HalfLock(ctx context.Context, key string, _ time.Duration) (bool, error) {
	return s.Client.SetNX(ctx, key, 1, 0).Result()
}

// TryLock implements [Locker].
func (s SetNXExpire) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	ok, err := s.Client.SetNX(ctx, key, 1, 0).Result()
	if err != nil {
		return nil, fmt.Errorf("setnx-expire: setnx: %w", err)
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	if err := s.Client.Expire(ctx, key, wholeSeconds(ttl)).Err(); err != nil {
		return nil, fmt.Errorf("setnx-expire: expire: %w", err)
	}
	return delLease{s.Client, key}, nil
}

// SetNXEX takes the lock atomically with SET key 1 NX EX ttl (rounded up to whole
// seconds). Release is DEL without an owner check, so a holder whose lock expired deletes
// the next holder's lock.
type SetNXEX struct {
	Client redis.Cmdable
}

var _ Locker = SetNXEX{}

// TryLock implements [Locker].
func (s SetNXEX) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	ok, err := s.Client.SetNX(ctx, key, 1, wholeSeconds(ttl)).Result()
	if err != nil {
		return nil, fmt.Errorf("set-nx-ex: set: %w", err)
	}
	if !ok {
		return nil, ErrNotAcquired
	}
	return delLease{s.Client, key}, nil
}
