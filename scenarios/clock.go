package scenarios

import (
	"context"
	"time"
)

// clock is the pacer's wait (see until). The runtime's timers wake up to a millisecond
// late on Linux (the poller's timeout is in whole milliseconds, golang/go#53824), and a
// buyer's latency counts from when it was due: at --rate 200 on a 2-CPU machine the
// timer's lateness was 0.59 ms of a lua purchase's 0.67 ms median, the harness's own
// time rather than the design's.
//
// So a wait has three parts. The runtime's timer covers what lies further off than
// coarse. A sleeper (Linux: a timerfd in the poller) covers the rest but for the last
// spin. The spin, reading the clock until it is time, takes the wake-up's own lateness
// out. Measured on that machine, 1,000 waits 5 ms apart on one CPU's goroutines: the
// timer alone woke 0.59 ms late at the median and 1.08 ms at the 99th percentile; a
// timerfd 44 µs and 117 µs; a timerfd and a 50 µs spin 44 ns and 102 µs.
type clock struct {
	timer *time.Timer
	fine  *sleeper // nil: the timer alone
}

const (
	coarse = 1500 * time.Microsecond
	// spinMost is the longest spin; spinShare the most of the time between two
	// arrivals a spin may take, so that at high rates the clock's spinning costs at most
	// that share of a CPU (a buyer every 20 µs: a 2 µs spin).
	spinMost  = 50 * time.Microsecond
	spinShare = 10
	// minSleep is the shortest sleep: at rates past a buyer every minSleep·spinShare the
	// clock wakes at most every minSleep, the buyers due meanwhile arriving together, so
	// that its wake-ups cost a few per cent of a CPU at any rate.
	minSleep = 100 * time.Microsecond
)

func newClock() *clock {
	c := &clock{timer: time.NewTimer(time.Hour), fine: newSleeper()}
	c.timer.Stop()
	return c
}

func (c *clock) close() {
	c.timer.Stop()
	if c.fine != nil {
		c.fine.close()
	}
}

// until waits until t0+due, never less, or until ctx ends (false); gap is the time
// between this arrival and the one before it (0: none), which bounds the spin.
func (c *clock) until(ctx context.Context, t0 time.Time, due, gap time.Duration) bool {
	early := time.Duration(0)
	if c.fine != nil {
		early = coarse
	}
	if left := due - time.Since(t0); left > early {
		c.timer.Reset(left - early)
		select {
		case <-ctx.Done():
			return false
		case <-c.timer.C:
		}
	}
	if c.fine != nil {
		spin := spinMost
		if gap > 0 {
			spin = min(spin, gap/spinShare)
		}
		if left := due - time.Since(t0) - spin; left > 0 {
			switch {
			case left >= minSleep:
				c.fine.sleep(left)
			case gap > 0 && gap < spinShare*minSleep:
				c.fine.sleep(minSleep)
			} // else a slow rate: spinning the rest costs little
		}
	}
	// Spins, or, with the timer alone, waits on it for the rest (a timer never fires
	// early, but a clock change may leave some).
	for left := due - time.Since(t0); left > 0; left = due - time.Since(t0) {
		if ctx.Err() != nil {
			return false
		}
		if c.fine == nil && left > spinMost {
			c.timer.Reset(left)
			select {
			case <-ctx.Done():
				return false
			case <-c.timer.C:
			}
		}
	}
	return ctx.Err() == nil
}
