package scenarios

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
)

// tally is what a running sale of any kind counts besides its ledger: latencies, how
// far it has got, and the errors its buyers and workers met.
type tally struct {
	rec    *results.Recorder
	warmup time.Duration
	// start is, in a shard, the sale's one start on this host's clock (every shard's
	// buyers count their schedule from it); zero in a sale run whole here.
	start time.Time
	// tolerant is set when faults act on servers or the network: errors are then the
	// fault's doing, and buyers carry on as a robust client would instead of ending the
	// run.
	tolerant bool
	// counting is set when someone reads sold and done (Sale.Progress).
	counting   bool
	sold, done atomic.Int64
	// inside is how many holders are in the critical section now; seen is what went
	// wrong so far, for Progress.
	inside                   atomic.Int64
	overlaps, repeats, crash atomic.Int64

	failures atomic.Int64
	errOnce  sync.Once
	firstErr error
	// broken is the first error of a design that broke (lockimpl.ErrBroken).
	brokenOnce sync.Once
	broken     error
}

func newTally(s Sale) *tally {
	return &tally{
		rec: results.NewRecorder(4 * runtime.GOMAXPROCS(0)), warmup: s.Warmup,
		tolerant: s.Faults.Needs().Disrupts(), counting: s.Progress != nil,
	}
}

// measure records a latency of buyer i, who was due at due (from the start), unless it
// arrived during the warm-up.
func (t *tally) measure(i int, due time.Duration, p results.Phase, d time.Duration) {
	if t.warmup > 0 && due < t.warmup {
		return
	}
	t.rec.Record(i, p, d)
}

// finished counts a buyer done, and a unit sold if it bought.
func (t *tally) finished(bought bool) {
	if !t.counting {
		return
	}
	t.done.Add(1)
	if bought {
		t.sold.Add(1)
	}
}

// released counts n units put on sale (a drop's wave), as sold for Progress.
func (t *tally) released(n int64) {
	if t.counting {
		t.sold.Add(n)
	}
}

// entered notes a holder in the critical section, and an overlap seen when another is
// in it too; left notes it out, dead or not.
func (t *tally) entered() {
	if t.counting && t.inside.Add(1) > 1 {
		t.overlaps.Add(1)
	}
}

func (t *tally) left(died bool) {
	if !t.counting {
		return
	}
	t.inside.Add(-1)
	if died {
		t.crash.Add(1)
	}
}

// again notes an order settled a second time (a queue's duplicate delivery worked);
// died a worker killed holding a task.
func (t *tally) again() {
	if t.counting {
		t.repeats.Add(1)
	}
}

func (t *tally) died() {
	if t.counting {
		t.crash.Add(1)
	}
}

// failed counts an error a buyer or worker met. Without faults that act on servers it
// is kept and ends the run: something is wrong with Redis, not with a design.
func (t *tally) failed(err error) {
	t.failures.Add(1)
	t.errOnce.Do(func() { t.firstErr = err })
	if errors.Is(err, lockimpl.ErrBroken) {
		t.brokenOnce.Do(func() { t.broken = err })
	}
}

// runErr is the error that makes the run incomplete, if any: under faults that disrupt
// Redis only a design that broke.
func (t *tally) runErr() error {
	if t.tolerant {
		t.brokenOnce.Do(func() {})
		return t.broken
	}
	t.errOnce.Do(func() {}) // the first error, if any, is written by now
	return t.firstErr
}

// errors is how many errors were met, and the first one's text.
func (t *tally) errors() (int, string) {
	t.errOnce.Do(func() {})
	if t.firstErr == nil {
		return int(t.failures.Load()), ""
	}
	return int(t.failures.Load()), t.firstErr.Error()
}

// latencies summarises the phases that recorded anything.
func (t *tally) latencies(phases ...results.Phase) map[string]results.Latency {
	m := make(map[string]results.Latency)
	for _, p := range phases {
		if l, err := results.Summarize(t.rec.Histogram(p)); err == nil && l.Count > 0 {
			m[p.String()] = l
		}
	}
	return m
}

// report calls s.Progress every second until the returned func is called, and once
// more then, with what the sale ended with; inj says what the faults did so far.
func (t *tally) report(s Sale, inj *faults.Injector) (stop func()) {
	if s.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	var lastSold int64
	last := start
	tick := func(final bool) {
		now, sold := time.Now(), t.sold.Load()
		s.Progress(Progress{Sold: sold, Stock: s.Stock, Done: int(t.done.Load()), Buyers: s.Buyers,
			Elapsed: now.Sub(start), SalesPerSec: float64(sold-lastSold) / now.Sub(last).Seconds(),
			Seen:    Seen{Overlaps: t.overlaps.Load(), Repeats: t.repeats.Load(), Crashed: t.crash.Load(), Errors: t.failures.Load()},
			Latency: t.main(), Faults: inj.Events(), Under: inj.Under(), Final: final})
		lastSold, last = sold, now
	}
	wg.Go(func() {
		wait.Every(ctx, time.Second, func() bool { tick(false); return true })
	})
	return func() { cancel(); wg.Wait(); tick(true) }
}

// main is the latency histogram of the sale's main phase so far (microseconds), as
// results.Run.MainLatency picks it: the purchase's, or a queue's order time.
func (t *tally) main() *hdrhistogram.Histogram {
	if h := t.rec.Histogram(results.Purchase); h.TotalCount() > 0 {
		return h
	}
	return t.rec.Histogram(results.Queue)
}
