package scenarios

import (
	"context"
	"sync"
)

// executor runs the Redis calls of a lock sale's buyers on a fixed set of goroutines, as
// many as the sale has connections. A buyer hands a call over and waits for it on a
// channel, so its own stack never holds go-redis's frames: a buyer parked in go-redis's
// pool queue kept a stack of about 8 KB, one parked on this queue keeps the 2 KB it
// started with. That is what lets 200,000 buyers wait at once within 1 GiB. The queue is
// a channel, first come first served, as the pool's queue was, so what a buyer waits for
// is unchanged. It has room for every buyer's call (a buyer has one at a time), so
// handing a call over never blocks: an executor that takes the next call does not also
// have to wake its sender, one goroutine switch less per command.
type executor struct {
	calls chan *call
	wg    sync.WaitGroup
}

type call struct {
	ctx  context.Context
	fn   func()
	ran  bool
	done chan struct{}
}

var calls = sync.Pool{New: func() any { return &call{done: make(chan struct{}, 1)} }}

// newExecutor starts n goroutines for callers that have at most room calls out at once.
func newExecutor(n, room int) *executor {
	x := &executor{calls: make(chan *call, room)}
	for range max(n, 1) {
		x.wg.Go(func() {
			for c := range x.calls {
				if c.ran = c.ctx.Err() == nil; c.ran {
					c.fn()
				}
				c.done <- struct{}{}
			}
		})
	}
	return x
}

// stop ends the executor's goroutines once every buyer is done.
func (x *executor) stop() {
	close(x.calls)
	x.wg.Wait()
}

// do runs fn on one of the executor's goroutines and returns when it has run, or ctx's
// error if ctx ended before fn could start. The hand-over is a plain send, not a select
// on ctx: a select's frame alone would take a waiting buyer's stack past 2 KB. The queue
// still drains when ctx ends, since the executor then skips the calls instead of running
// them.
func (x *executor) do(ctx context.Context, fn func()) error {
	c := calls.Get().(*call)
	c.ctx, c.fn = ctx, fn
	x.calls <- c
	<-c.done
	ran := c.ran
	c.ctx, c.fn = nil, nil
	calls.Put(c)
	if !ran {
		return ctx.Err()
	}
	return nil
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
