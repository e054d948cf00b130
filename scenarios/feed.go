package scenarios

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// feed runs a sale's one-call buyers on a fixed set of workers: each worker takes the
// next buyer that has arrived and calls serve with it, until every buyer was served.
// Buyers arrive as p says (a Rush: all at t0), and at is when one was due. A buyer costs nothing but its index until a
// worker takes it, so a million of them need no goroutine, channel slot or allocation
// each. When ctx ends, arrivals stop, the workers finish the purchase in hand, and
// unstarted is told the first buyer none took: that one and those after it never
// started.
func feed(ctx context.Context, n, workers int, p Pacer, t0 time.Time,
	serve func(worker, i int, at time.Time), unstarted func(from int)) {
	f := &feeder{total: int64(n), workers: max(workers, 1)}
	f.cond = sync.NewCond(&f.mu)
	_, rush := p.(Rush)
	if rush {
		f.arrived.Store(f.total)
		f.closed = true
	}
	var wg sync.WaitGroup
	for w := range max(workers, 1) {
		wg.Go(func() {
			for i, ok := f.take(ctx); ok; i, ok = f.take(ctx) {
				serve(w, i, t0.Add(p.Due(i)))
			}
		})
	}
	if !rush {
		arrive(ctx, n, p, t0, f.arrive)
		f.close()
	}
	wg.Wait()
	if next := int(f.next.Load()); next < n {
		unstarted(next)
	}
}

// feeder hands out buyer indices in order, as far as they have arrived.
type feeder struct {
	total         int64
	workers       int
	next, arrived atomic.Int64
	mu            sync.Mutex
	cond          *sync.Cond
	closed        bool // no more arrivals
}

// take returns the next buyer that has arrived, waiting for one if none has yet; ok is
// false once every buyer that will arrive was taken, or ctx ended.
func (f *feeder) take(ctx context.Context) (i int, ok bool) {
	for {
		if ctx.Err() != nil {
			return 0, false
		}
		n := f.next.Load()
		if n < f.arrived.Load() {
			if f.next.CompareAndSwap(n, n+1) {
				return int(n), true
			}
			continue
		}
		f.mu.Lock()
		for f.next.Load() >= f.arrived.Load() && !f.closed {
			f.cond.Wait()
		}
		done := f.closed && f.next.Load() >= f.arrived.Load()
		f.mu.Unlock()
		if done {
			return 0, false
		}
	}
}

// arrive makes the buyers before n arrive, waking a waiting worker for each: at an open
// load a buyer or two arrive at once, and waking every worker for one of them put the
// others' wake-ups in its way.
func (f *feeder) arrive(n int) {
	f.mu.Lock()
	k := int64(n) - f.arrived.Load()
	f.arrived.Store(int64(n))
	f.mu.Unlock()
	if k >= int64(f.workers) {
		f.cond.Broadcast()
		return
	}
	for range k {
		f.cond.Signal()
	}
}

// close ends the arrivals: workers stop once they took every buyer that arrived.
func (f *feeder) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.cond.Broadcast()
}
