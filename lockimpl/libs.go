package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// Redsync takes the lock with go-redsync/redsync: Redlock over its pools, one lock server
// or several independent ones (a majority must grant it). Each TryLock is one attempt
// (TryLockContext); releases check the value.
//
// redsync gives each attempt a share of the TTL (its timeout factor, 0.05 by default: 50ms
// of a 1s lock) and counts a slower node as a refusal. Under a flash sale's queueing that
// refuses nearly every attempt, so this design uses a factor of 0.5; a user tuning
// redsync for such load would too.
type Redsync struct {
	rs *redsync.Redsync
}

var _ Locker = (*Redsync)(nil)

// NewRedsync returns the design over the given lock servers.
func NewRedsync(clients ...redis.UniversalClient) *Redsync {
	pools := make([]redsyncredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = goredis.NewPool(c)
	}
	return &Redsync{rs: redsync.New(pools...)}
}

// TryLock implements [Locker].
func (r *Redsync) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	m := r.rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1), redsync.WithTimeoutFactor(0.5))
	err := m.TryLockContext(ctx)
	var taken *redsync.ErrTaken
	var nodeTaken *redsync.ErrNodeTaken
	switch {
	case err == nil:
		return redsyncLease{m}, nil
	case errors.Is(err, redsync.ErrFailed), errors.As(err, &taken), errors.As(err, &nodeTaken):
		return nil, ErrNotAcquired
	case wait.TimedOut(err) && ctx.Err() == nil:
		// redsync's own per-try deadline passed: the library counts this attempt as
		// failed, and so do we.
		return nil, ErrNotAcquired
	}
	return nil, fmt.Errorf("redsync: %w", err)
}

type redsyncLease struct{ m *redsync.Mutex }

func (l redsyncLease) Release(ctx context.Context) error {
	ok, err := l.m.UnlockContext(ctx)
	var taken *redsync.ErrTaken
	var nodeTaken *redsync.ErrNodeTaken
	switch {
	case errors.Is(err, redsync.ErrLockAlreadyExpired), errors.As(err, &taken), errors.As(err, &nodeTaken), err == nil && !ok:
		return ErrNotHeld
	case err != nil:
		return fmt.Errorf("redsync: release: %w", err)
	}
	return nil
}

// Redislock takes the lock with bsm/redislock: SET NX PX with a random token, one attempt
// per TryLock, a compare-and-delete release.
type Redislock struct {
	Client *redislock.Client
}

var _ Locker = Redislock{}

// TryLock implements [Locker].
func (r Redislock) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	l, err := r.Client.Obtain(ctx, key, ttl, &redislock.Options{RetryStrategy: redislock.NoRetry()})
	switch {
	case err == nil:
		return redislockLease{l}, nil
	case errors.Is(err, redislock.ErrNotObtained):
		return nil, ErrNotAcquired
	}
	return nil, fmt.Errorf("redislock: %w", err)
}

type redislockLease struct{ l *redislock.Lock }

func (l redislockLease) Release(ctx context.Context) error {
	err := l.l.Release(ctx)
	if errors.Is(err, redislock.ErrLockNotHeld) {
		return ErrNotHeld
	}
	if err != nil {
		return fmt.Errorf("redislock: release: %w", err)
	}
	return nil
}
