package scenarios

import (
	"cmp"
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// executor is one application instance's connection pool at work: as many goroutines as
// it has connections, each taking the next piece of work from one queue, first come first
// served, as go-redis's pool queue serves its callers. The work is of two sorts: a waiting
// buyer's turn to try for the lock (see waiters), which costs the buyer no goroutine at
// all, and a call handed over by a goroutine that has one (a lock holder), which waits for
// it on a channel. Either way go-redis's frames live on the executor's stacks only.
//
// The queue has room for every buyer's work (a buyer has at most one piece out), so
// handing work over never blocks.
type executor struct {
	q chan work
	// quitting, once set, has the goroutines leave the queue as it is (see abandon);
	// gone is closed once they have.
	quitting   atomic.Bool
	gone       chan struct{}
	goroutines int
	// turn is a waiting buyer's step, run on the executor's goroutine: its try, or the
	// look at the stock after a failed one (check).
	turn func(buyer int, check bool)
	// delay, when set, is a latency spike to wait before a piece of work (a fault).
	delay func() time.Duration
	wg    sync.WaitGroup
}

// work is a buyer's turn (c nil) or a call.
type work struct {
	c     *call
	buyer int32
	check bool
}

type call struct {
	ctx    context.Context
	fn     func()
	ran    bool
	queued time.Time
	// waited is how long the call waited for a connection.
	waited time.Duration
	done   chan struct{}
}

var calls = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// newExecutor starts n goroutines for callers that have at most room pieces of work out
// at once; turn takes a waiting buyer's turns, if the sale has any.
func newExecutor(n, room int, turn func(int, bool), delay func() time.Duration) *executor {
	// Room for a wake-up per goroutine besides the buyers' work (see abandon).
	n = max(n, 1)
	x := &executor{q: make(chan work, room+n), turn: turn, delay: delay, gone: make(chan struct{}), goroutines: n}
	for range n {
		x.wg.Go(x.serve)
	}
	return x
}

func (x *executor) serve() {
	for w := range x.q {
		if x.quitting.Load() {
			return
		}
		if x.delay != nil {
			if d := x.delay(); d > 0 {
				time.Sleep(d) // the connection is held up as a slow round trip would hold it
			}
		}
		if w.c == nil {
			x.turn(int(w.buyer), w.check)
			continue
		}
		c := w.c
		if c.ran = c.ctx.Err() == nil; c.ran {
			c.waited = time.Since(c.queued)
			c.fn()
		}
		c.done <- struct{}{}
	}
}

// stop ends the executor's goroutines once every buyer is done.
func (x *executor) stop() {
	if !x.quitting.Load() {
		close(x.q)
	}
	x.wg.Wait()
}

// abandon ends the executor's goroutines at once, leaving the work queued for them
// undone, and returns when they have ended: a sale stopped with millions of buyers in
// line settles them in one pass (see lockSale.cutOff) rather than a turn each. A call
// queued meanwhile returns its context's error. Nothing may be queued for a turn after.
func (x *executor) abandon() {
	x.quitting.Store(true)
	for range x.goroutines {
		x.q <- work{buyer: -1} // wakes a goroutine waiting on an empty queue
	}
	x.wg.Wait()
	close(x.gone)
}

// wake queues buyer's turn to try.
func (x *executor) wake(buyer int) { x.q <- work{buyer: int32(buyer)} }

// recheck queues buyer's look at the stock, behind what was queued while it tried: a
// holder's call queued meanwhile goes first, as it would behind a buyer's two separate
// calls through a pool.
func (x *executor) recheck(buyer int) { x.q <- work{buyer: int32(buyer), check: true} }

// do runs fn on one of the executor's goroutines and returns when it has run, or ctx's
// error if ctx ended before fn could start. The queue still drains when ctx ends, since
// the executor then skips the calls instead of running them.
func (x *executor) do(ctx context.Context, fn func()) error {
	_, err := x.timed(ctx, fn)
	return err
}

// timed is do, and how long fn waited for a connection. A nil executor runs fn on the
// caller's goroutine: a drop's few scheduler instances need no pool to queue at.
func (x *executor) timed(ctx context.Context, fn func()) (time.Duration, error) {
	if x == nil {
		fn()
		return 0, nil
	}
	c := calls.Get().(*call)
	c.ctx, c.fn, c.queued = ctx, fn, time.Now()
	x.q <- work{c: c}
	select {
	case <-c.done:
	case <-x.gone:
		// Abandoned: a call that ran before the goroutines left has said so by now.
		select {
		case <-c.done:
		default:
			return 0, cmp.Or(ctx.Err(), context.Canceled) // c stays with the abandoned queue
		}
	}
	ran, waited := c.ran, c.waited
	c.ctx, c.fn, c.waited = nil, nil, 0
	calls.Put(c)
	if !ran {
		return 0, ctx.Err()
	}
	return waited, nil
}

// runOn is do for a call that returns a value and an error.
func runOn[T any](ctx context.Context, x *executor, fn func() (T, error)) (T, error) {
	var v T
	var err error
	if xerr := x.do(ctx, func() { v, err = fn() }); xerr != nil {
		return v, xerr
	}
	return v, err
}
