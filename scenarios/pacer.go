package scenarios

import (
	"context"
	"math"
	"time"
)

// Pacer is when a sale's buyers arrive: the one arrival schedule every kind of sale
// follows. Buyer i is due Due(i) after the sale's start; a buyer's latencies count from
// when it was due, so a stall shows in them instead of slowing the arrivals (no
// coordinated omission), and a timer that fires late makes every buyer due by then
// arrive at once rather than dropping any.
type Pacer interface {
	// Due is when buyer i (from 0) arrives, from the sale's start.
	Due(i int) time.Duration
}

var (
	_ Pacer = Rush{}
	_ Pacer = Steady{}
	_ Pacer = Ramp{}
)

// Rush is the closed load: every buyer at the start.
type Rush struct{}

// Due implements [Pacer].
func (Rush) Due(int) time.Duration { return 0 }

// Steady is an open load of Rate buyers a second.
type Steady struct{ Rate float64 }

// Due implements [Pacer].
func (p Steady) Due(i int) time.Duration {
	return time.Duration(float64(i) / p.Rate * float64(time.Second))
}

// Ramp is an open load whose rate goes linearly from From to To buyers a second across
// N buyers.
type Ramp struct {
	From, To float64
	N        int
}

// Due implements [Pacer]. With arrivals A(t) = r0·t + (r1-r0)·t²/(2T) and T =
// 2N/(r0+r1), buyer i arrives at the t where A(t) = i.
func (p Ramp) Due(i int) time.Duration {
	r0, r1 := p.From, p.To
	if r1 == r0 {
		return Steady{r0}.Due(i)
	}
	total := 2 * float64(p.N) / (r0 + r1)
	a := (r1 - r0) / (2 * total)
	t := (-r0 + math.Sqrt(r0*r0+4*a*float64(i))) / (2 * a)
	return time.Duration(t * float64(time.Second))
}

// Pacer is the schedule s's Rate and RampTo describe.
func (s Sale) Pacer() Pacer {
	switch {
	case s.Rate == 0:
		return Rush{}
	case s.RampTo == 0:
		return Steady{s.Rate}
	}
	return Ramp{From: s.Rate, To: s.RampTo, N: s.Buyers}
}

// arrive calls upTo with the number of buyers due, each time more are, until all n are
// or ctx ends; it returns how many arrived. Buyers due by the time the wait for one ends
// arrive together. The wait is a clock's, to the microsecond where it can be (see clock).
func arrive(ctx context.Context, n int, p Pacer, t0 time.Time, upTo func(n int)) int {
	c := newClock()
	defer c.close()
	for i := 0; ; {
		now := time.Since(t0)
		for i < n && p.Due(i) <= now {
			i++
		}
		upTo(i)
		if i == n {
			return n
		}
		var gap time.Duration
		if i > 0 {
			gap = p.Due(i) - p.Due(i-1)
		}
		if !c.until(ctx, t0, p.Due(i), gap) {
			return i
		}
	}
}

// Paced calls fn with 0 to n-1, each at its time at rate calls a second, on the pacer's
// own goroutine and clock as a sale's buyers arrive, until all were called or ctx ends.
// A call that overruns the next one's time delays it: fn is meant to be short (a command
// sent alone at a sale's pace, to time its round trip).
func Paced(ctx context.Context, n int, rate float64, fn func(i int)) {
	next := 0
	arrive(ctx, n, Steady{rate}, time.Now(), func(k int) {
		for ; next < k; next++ {
			fn(next)
		}
	})
}
