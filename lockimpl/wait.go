package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TokenWait is Token followed by WAIT 1: the lock counts as taken only once a replica
// has it too, and is given back when none acknowledged it within Timeout.
type TokenWait struct {
	Client redis.Cmdable
	// Timeout is how long WAIT waits for the replica. Default: DefaultWaitTimeout.
	Timeout time.Duration
}

// DefaultWaitTimeout is TokenWait's default WAIT timeout. A replica on the same network
// acknowledges within a millisecond or two, but under make test's load 100ms was once
// not enough; the timeout costs only when no replica answers.
const DefaultWaitTimeout = 500 * time.Millisecond

var _ Locker = TokenWait{}

// ErrNotReplicated is a lock no replica acknowledged in time; it was given back.
var ErrNotReplicated = fmt.Errorf("%w: no replica acknowledged it", ErrNotAcquired)

// TryLock implements [Locker]. WAIT counts the writes of its own connection, so the SET
// and the WAIT go out together in one pipeline.
func (t TokenWait) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultWaitTimeout
	}
	token := NewToken()
	pipe := t.Client.Pipeline()
	set := pipe.SetNX(ctx, key, token, ttl)
	wait := pipe.Do(ctx, "wait", 1, timeout.Milliseconds())
	_, err := pipe.Exec(ctx)
	ok, serr := set.Result()
	switch {
	case serr != nil:
		return nil, fmt.Errorf("token-wait: set nx: %w", serr)
	case !ok:
		return nil, ErrNotAcquired
	}
	lease := &tokenLease{client: t.Client, key: key, token: token}
	acked, err := wait.Int64()
	if err == nil && acked >= 1 {
		return lease, nil
	}
	// Not replicated: a failover could lose it, so it is not held. Give it back.
	if rerr := lease.Release(ctx); rerr != nil && !errors.Is(rerr, ErrNotHeld) {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return nil, fmt.Errorf("token-wait: wait: %w", err)
	}
	return nil, ErrNotReplicated
}
