// Package wait lets time pass the way every loop of the harness must: a sleep, a
// deadline or a ticker that ends as soon as its context does.
package wait

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// Sleep waits d, or until ctx ends, and then returns ctx's error. A d of zero or less
// returns at once, without looking at ctx.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Until waits until t, or until ctx ends, as Sleep does.
func Until(ctx context.Context, t time.Time) error { return Sleep(ctx, time.Until(t)) }

// Every calls fn every d, the first time d from now, until ctx ends or fn returns
// false. A call that outlasts d delays the next one rather than queueing ticks.
func Every(ctx context.Context, d time.Duration, fn func() bool) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !fn() {
			return
		}
	}
}

// TimedOut reports whether err is a deadline passing: a context's, or a socket's.
func TimedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout())
}
