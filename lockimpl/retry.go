package lockimpl

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Defaults for [Retry]'s zero fields.
const (
	DefaultRetryInterval = 10 * time.Millisecond
	DefaultRetryTimeout  = 10 * time.Second
)

// Retry is the classic acquire loop as a value: try, sleep Interval, and give up once
// Timeout has passed since the first try. The zero value uses the defaults.
type Retry struct {
	// Interval is the sleep between tries. Default: DefaultRetryInterval.
	Interval time.Duration
	// Timeout is how long the loop keeps trying. Default: DefaultRetryTimeout.
	Timeout time.Duration
	// Jitter spreads each sleep at random over Interval x (1 ± Jitter), so that waiters
	// do not retry in step. Default: 0, the classic fixed interval.
	Jitter float64
	// Abandon, when set, is asked after each failed try whether waiting is still worth
	// it; a flash-sale buyer stops once the stock is gone. Default: never abandon.
	Abandon func(ctx context.Context) (bool, error)
}

func (r Retry) interval() time.Duration {
	if r.Interval > 0 {
		return r.Interval
	}
	return DefaultRetryInterval
}

// sleep is one interval, jittered.
func (r Retry) sleep() time.Duration {
	d := r.interval()
	if r.Jitter > 0 {
		d = time.Duration(float64(d) * (1 + r.Jitter*(2*rand.Float64()-1)))
	}
	return d
}

// Backoff is the sleep before the next try: Interval, jittered, for a caller that runs
// the loop itself.
func (r Retry) Backoff() time.Duration { return r.sleep() }

// Limit is how long the loop keeps trying: Timeout, or its default.
func (r Retry) Limit() time.Duration { return r.timeout() }

func (r Retry) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return DefaultRetryTimeout
}

// Acquire takes the lock on key with l, retrying as r says. It returns the lease and the
// number of tries made, or the error [Retry.Do] describes.
func (r Retry) Acquire(ctx context.Context, l Locker, key string, ttl time.Duration) (Lease, int, error) {
	var lease Lease
	tries, err := r.Do(ctx, func(ctx context.Context) error {
		var err error
		lease, err = l.TryLock(ctx, key, ttl)
		return err
	})
	return lease, tries, err
}

// Do calls try until it returns anything but ErrNotAcquired, and returns that and the
// number of tries. Errors: ErrNotAcquired once Timeout has passed, ErrAbandoned when
// Abandon said to stop, the context's error when ctx ends, or the first error a try or
// Abandon returned.
//
// The timeout is checked between tries, not imposed on a try in flight: cutting a SET off
// after Redis ran it would leave a lock nobody knows it holds.
func (r Retry) Do(ctx context.Context, try func(context.Context) error) (int, error) {
	deadline := time.Now().Add(r.timeout())
	var timer *time.Timer
	for tries := 1; ; tries++ {
		err := try(ctx)
		if !errors.Is(err, ErrNotAcquired) {
			return tries, err
		}
		if r.Abandon != nil {
			stop, err := r.Abandon(ctx)
			if err != nil {
				return tries, err
			}
			if stop {
				return tries, ErrAbandoned
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return tries, ErrNotAcquired
		}
		wait = min(wait, r.sleep())
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return tries, ctx.Err()
		case <-timer.C:
		}
	}
}
