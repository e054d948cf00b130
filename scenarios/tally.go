package scenarios

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
)

// tally is what a running sale of any kind counts besides its ledger: latencies, how
// far it has got, and the errors its buyers and workers met.
type tally struct {
	rec    *results.Recorder
	warmup time.Duration
	// tolerant is set when faults act on servers or the network: errors are then the
	// fault's doing, and buyers carry on as a robust client would instead of ending the
	// run.
	tolerant bool
	// counting is set when someone reads sold and done (Sale.Progress).
	counting   bool
	sold, done atomic.Int64

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

// report calls s.Progress every second until the returned func is called.
func (t *tally) report(s Sale) (stop func()) {
	if s.Progress == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	wg.Go(func() {
		var lastSold int64
		last := start
		wait.Every(ctx, time.Second, func() bool {
			now, sold := time.Now(), t.sold.Load()
			s.Progress(Progress{Sold: sold, Stock: s.Stock, Done: int(t.done.Load()), Buyers: s.Buyers,
				Elapsed: now.Sub(start), SalesPerSec: float64(sold-lastSold) / now.Sub(last).Seconds()})
			lastSold, last = sold, now
			return true
		})
	})
	return func() { cancel(); wg.Wait() }
}
