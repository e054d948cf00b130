package scenarios

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// startWorker starts one worker with a name of its own.
func (qs *queueRun) startWorker(ctx context.Context) {
	name := "w" + strconv.FormatInt(qs.nextID.Add(1), 10)
	qs.workers.Add(1)
	go func() {
		defer qs.workers.Done()
		takes := qs.work(ctx, name)
		qs.mu.Lock()
		qs.ledger.Takes = append(qs.ledger.Takes, takes...)
		qs.mu.Unlock()
	}()
}

// work takes and fulfils tasks until ctx ends or a fault kills the worker, which is then
// replaced, as a supervisor would; it returns the worker's takes.
func (qs *queueRun) work(ctx context.Context, name string) []oracle.Take {
	var takes []oracle.Take
	for ctx.Err() == nil {
		begin := time.Since(qs.t0)
		task, err := qs.q.Dequeue(ctx, name, 100*time.Millisecond)
		if errors.Is(err, queueimpl.ErrEmpty) || (err != nil && ended(ctx)) {
			continue
		}
		if err != nil {
			qs.t.failed(err)
			if inDoubt(err) {
				qs.mu.Lock()
				qs.ledger.DoubtfulTakes = append(qs.ledger.DoubtfulTakes, time.Since(qs.t0))
				qs.mu.Unlock()
			}
			wait.Sleep(ctx, 20*time.Millisecond) // the server may come back
			continue
		}
		qs.taken.Add(1)
		qs.busy.Add(1)
		takes = qs.handle(ctx, task, begin, takes)
		qs.busy.Add(-1)
		if len(takes) > 0 && takes[len(takes)-1].Result == oracle.TakeCrashed {
			qs.startWorker(ctx)
			return takes
		}
	}
	return takes
}

// handle carries one task through the faults, the fulfil and the ack, and appends its
// take to takes.
func (qs *queueRun) handle(ctx context.Context, task queueimpl.Task, begin time.Duration, takes []oracle.Take) []oracle.Take {
	o := task.Order()
	t := oracle.Take{ID: o.ID, Seq: o.Seq, Begin: begin, End: time.Since(qs.t0)}
	v := qs.inj.Delivered()
	// A task a process holds (a process adapter's) goes through what its worker does:
	// killed with it, stopped while it stalls.
	f, held := task.(frozen)
	if v.Crash {
		if held {
			f.Freeze(time.Time{})
		}
		t.Result = oracle.TakeCrashed
		return append(takes, t)
	}
	if held && !v.Until.IsZero() {
		f.Freeze(v.Until)
	}
	if err := v.Wait(ctx); err != nil {
		return append(takes, t)
	}
	wait.Sleep(ctx, qs.Work)
	var err error
	t.Result, err = qs.Fulfil.apply(ctx, qs.r.Stock, qs.k, o.ID)
	t.Fulfilled = time.Since(qs.t0)
	if err != nil {
		if !ended(ctx) {
			qs.t.failed(err)
		}
		return append(takes, t)
	}
	qs.settle(o.ID, t.Fulfilled, t.Result == oracle.TakeFulfilled)
	if v.CrashLate {
		if held {
			f.Freeze(time.Time{})
		}
		t.Result = oracle.TakeCrashed // its effect stands; its ack never comes
		return append(takes, t)
	}
	if err := task.Ack(ctx); err != nil && !ended(ctx) {
		qs.t.failed(err)
	}
	return append(takes, t)
}

// settle notes the first time an order is fulfilled or refused, and its latency: from
// when the order was due to arrive, so that a stalled enqueue shows in it too.
func (qs *queueRun) settle(id string, at time.Duration, fulfilled bool) {
	if _, dup := qs.settledSet.LoadOrStore(id, true); dup {
		return
	}
	qs.settled.Add(1)
	qs.t.finished(fulfilled)
	i, err := strconv.Atoi(id)
	if err != nil || i >= len(qs.enqueued) || qs.enqueued[i].Load() == 0 {
		return
	}
	due := qs.pacer.Due(i)
	qs.t.measure(i, due, results.Queue, at-due)
}

// frozen is a task held by a process that a fault can stop or kill.
type frozen interface {
	Freeze(until time.Time)
}
