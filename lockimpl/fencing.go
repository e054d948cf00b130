package lockimpl

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Fencing is [Token] plus a fencing token from INCR on a counter beside the lock. The
// stock store checks the token on every read and write ([FencedRead], [FencedWrite]), so a
// holder that lost its lock, by a pause or a failover, is refused rather than obeyed.
type Fencing struct {
	Client redis.Cmdable
}

var _ Locker = Fencing{}

// TryLock implements [Locker].
func (f Fencing) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	t, err := takeToken(ctx, f.Client, key, ttl)
	if err != nil {
		return nil, fmt.Errorf("fencing: %w", err)
	}
	if t == nil {
		return nil, ErrNotAcquired
	}
	n, err := f.Client.Incr(ctx, key+":counter").Result()
	if err != nil {
		t.Release(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("fencing: incr: %w", err)
	}
	return &fencedLease{tokenLease: t, fence: n}, nil
}

type fencedLease struct {
	*tokenLease
	fence int64
}

func (l *fencedLease) Token() int64 { return l.fence }

// The store's side of fencing. A read registers the token and must bring a larger one
// than any seen; a write must bring the token of the latest read. A holder whose lock was
// lost is therefore refused as soon as anyone newer has read, and a repeated token is
// refused outright.
var (
	fencedReadScript = redis.NewScript(`
local seen = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) <= seen then
  redis.call('INCR', KEYS[3])
  return {0, seen}
end
redis.call('SET', KEYS[2], ARGV[1], 'KEEPTTL')
return {1, tonumber(redis.call('GET', KEYS[1]) or '0')}`)

	fencedWriteScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  redis.call('INCR', KEYS[3])
  return 0
end
redis.call('SET', KEYS[1], ARGV[2], 'KEEPTTL')
redis.call('RPUSH', KEYS[4], ARGV[3])
return 1`)
)

// FencedRead reads the stock of s for the holder of token, or returns ErrStale.
func FencedRead(ctx context.Context, c redis.Scripter, s Stock, token int64) (int64, error) {
	res, err := fencedReadScript.Run(ctx, c, []string{s.Key, s.Fence, s.Stale}, token).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("fenced read: %w", err)
	}
	if res[0] == 0 {
		return 0, ErrStale
	}
	return res[1], nil
}

// FencedWrite sets the stock of s to left and records buyer's order, for the holder of
// token, or returns ErrStale.
func FencedWrite(ctx context.Context, c redis.Scripter, s Stock, token, left int64, buyer string) error {
	ok, err := fencedWriteScript.Run(ctx, c, []string{s.Key, s.Fence, s.Stale, s.Orders}, token, left, buyer).Int64()
	if err != nil {
		return fmt.Errorf("fenced write: %w", err)
	}
	if ok == 0 {
		return ErrStale
	}
	return nil
}
