package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// dequeueWait is how long a worker's dequeue waits for a task before it asks again.
const dequeueWait = 100 * time.Millisecond

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
		task, err := qs.q.Dequeue(ctx, name, dequeueWait)
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
		if qs.Shard.Sharded() {
			qs.r.StockAdmin.Incr(ctx, qs.k.taken) // a miss delays the quiet end by a tick
		}
		qs.busy.Add(1)
		takes = qs.handle(ctx, name, task, begin, takes)
		qs.busy.Add(-1)
		if len(takes) > 0 && takes[len(takes)-1].Result == oracle.TakeCrashed {
			qs.t.died()
			qs.startWorker(ctx)
			return takes
		}
	}
	return takes
}

// handle carries one task through the faults, the fulfil and the ack, and appends its
// take to takes.
func (qs *queueRun) handle(ctx context.Context, name string, task queueimpl.Task, begin time.Duration, takes []oracle.Take) []oracle.Take {
	o := task.Order()
	t := oracle.Take{ID: o.ID, Seq: o.Seq, Begin: begin, End: time.Since(qs.t0)}
	v := qs.inj.Delivered()
	if v.Evict != "" {
		v.Crash = qs.evict(ctx, v.Evict, o) || v.Crash
	}
	if v.Churn {
		v.Crash = qs.churn(ctx, name, o) || v.Crash
	}
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
	if held && !v.FreezeUntil.IsZero() {
		f.Freeze(v.FreezeUntil)
	}
	tm, stopped := qs.terminate(task, o, &v)
	if stopped {
		qs.termEnded(o, fmt.Sprintf("was gone within %s of SIGTERM: the task's work died with it", faults.TermNotice))
		t.Result = oracle.TakeCrashed
		return append(takes, t)
	}
	if err := v.Wait(ctx); err != nil {
		return append(takes, t)
	}
	if w, ok := task.(waker); ok && held && !v.FreezeUntil.IsZero() {
		if err := w.Wake(ctx); errors.Is(err, queueimpl.ErrWorkerGone) {
			qs.inj.Strike(faults.WorkerPause, fmt.Sprintf("the process of the worker with order %s ended itself as it woke (its library's own timeout): the task's work died with it", o.ID))
			t.Result = oracle.TakeCrashed
			return append(takes, t)
		}
	}
	wait.Sleep(ctx, qs.Work)
	if tm.over() {
		qs.termEnded(o, tm.how())
		t.Result = oracle.TakeCrashed
		return append(takes, t)
	}
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
	err = task.Ack(ctx)
	switch {
	case err != nil && tm.over():
		qs.termEnded(o, "gone after the task's work, before its ack: its effect stands")
		t.Result = oracle.TakeCrashed
	case errors.Is(err, queueimpl.ErrWorkerGone): // its library's own doing: its effect stands
		t.Result = oracle.TakeCrashed
	case err != nil && !ended(ctx):
		qs.t.failed(err)
	case tm.gone != nil:
		qs.termEnded(o, "drained: it finished the task and acknowledged it")
	}
	return append(takes, t)
}

// evict evicts the design's keys of class that hold what it keeps of o, while a worker
// holds o, and records it. It reports whether anything was evicted: a design that keeps
// no such key (or none there now) is not struck, and its worker lives.
//
// The keys go by UNLINK, as the eviction of a maxmemory policy frees them: a policy
// picks its keys by sampling, and this picks one class, so that what the design does
// without those keys is what the sale shows.
func (qs *queueRun) evict(ctx context.Context, class faults.KeyClass, o queueimpl.Order) bool {
	c, ok := qs.admin.(queueimpl.Classed)
	if !ok {
		return false
	}
	keys := c.ClassKeys(class, o)
	if len(keys) == 0 {
		return false
	}
	n, err := qs.r.LockAdmins[0].Unlink(ctx, keys...).Result()
	if err != nil || n == 0 {
		return false
	}
	qs.inj.Strike(class.Fault(), fmt.Sprintf("the queue server evicted the %s keys %s while the worker holding order %s works on it; that worker dies",
		class, strings.Join(keys, ", "), o.ID))
	return true
}

// churn deletes the consumer of worker, which dies holding o, as a cleanup of gone
// consumers does, and records it. It reports whether it did: a design whose workers are
// not consumers of a group is not struck, and its worker lives. The worker's place is
// taken under a new name, as every replacement's is.
func (qs *queueRun) churn(ctx context.Context, worker string, o queueimpl.Order) bool {
	c, ok := qs.admin.(queueimpl.Churner)
	if !ok {
		return false
	}
	pending, err := c.DeleteConsumer(ctx, worker)
	if err != nil {
		qs.inj.Strike(faults.ConsumerChurn, fmt.Sprintf("the worker %s holding order %s died, and deleting its consumer failed: %v", worker, o.ID, err))
		return true
	}
	entries := "entries"
	if pending == 1 {
		entries = "entry"
	}
	qs.inj.Strike(faults.ConsumerChurn, fmt.Sprintf("the worker %s holding order %s dies, and its consumer is deleted from the group with %d %s pending; workers go on under new names",
		worker, o.ID, pending, entries))
	return true
}

// terminate sends SIGTERM to the process that holds task when v says so (WorkerTerm),
// and says whether it stopped at once. A task no process holds (a built-in design's) is
// not struck: its job then takes no longer than usual.
func (qs *queueRun) terminate(task queueimpl.Task, o queueimpl.Order, v *faults.Victim) (term, bool) {
	if !v.Term {
		return term{}, false
	}
	var tm term
	if t, ok := task.(terminable); ok {
		tm = term{gone: t.Terminate(v.Grace), killAt: time.Now().Add(v.Grace), went: new(atomic.Int64)}
	}
	if tm.gone == nil {
		v.Until = v.FreezeUntil
		return term{}, false
	}
	go func() {
		<-tm.gone
		tm.went.Store(time.Now().UnixNano())
	}()
	qs.inj.Strike(faults.WorkerTerm, fmt.Sprintf("the process of the worker with order %s sent SIGTERM, SIGKILL %s later", o.ID, v.Grace))
	select {
	case <-tm.gone:
		return tm, true
	case <-time.After(faults.TermNotice): // it handles SIGTERM: the task goes on
		return tm, false
	}
}

// termEnded records what became of a task whose process was sent SIGTERM.
func (qs *queueRun) termEnded(o queueimpl.Order, what string) {
	qs.inj.Strike(faults.WorkerTerm, fmt.Sprintf("the process of the worker with order %s %s", o.ID, what))
}

// term is a process sent SIGTERM: gone closes once it is gone, and at killAt it is sent
// SIGKILL. The zero term is no process.
type term struct {
	gone   <-chan struct{}
	killAt time.Time
	went   *atomic.Int64 // when it was gone, in Unix nanoseconds: 0 until then
}

// how says how a process whose task's work ended with it went: by itself (its
// library's shutdown ended the task) or killed at the grace's end.
func (t term) how() string {
	if went := t.went.Load(); went != 0 && time.Unix(0, went).Before(t.killAt) {
		return "exited before the task's work was done (its library's shutdown): the work died with it"
	}
	return "was killed at the grace's end, mid-task: the work died with it"
}

// over reports whether the process is gone, or its SIGKILL due: a task whose work ends
// later ends with it (however late the signal is delivered on a loaded machine).
func (t term) over() bool {
	if t.gone == nil {
		return false
	}
	select {
	case <-t.gone:
		return true
	default:
		return !time.Now().Before(t.killAt)
	}
}

// settle notes the first time an order is fulfilled or refused, and its latency: from
// when the order was due to arrive, so that a stalled enqueue shows in it too.
func (qs *queueRun) settle(id string, at time.Duration, fulfilled bool) {
	if _, dup := qs.settledSet.LoadOrStore(id, true); dup {
		qs.t.again()
		return
	}
	qs.settled.Add(1)
	qs.t.finished(fulfilled)
	i, err := strconv.Atoi(id)
	if err != nil {
		return
	}
	if qs.Shard.Sharded() {
		// Any shard's order: counted settled where every shard sees it, its latency
		// from when the sale's one schedule had it due (every shard starts at one moment).
		qs.r.StockAdmin.SAdd(context.Background(), qs.k.settled, id)
		if i < qs.Buyers {
			due := qs.pacer.Due(i)
			qs.t.measure(i, due, results.Queue, at-due)
		}
		return
	}
	if i >= len(qs.enqueued) || qs.enqueued[i].Load() == 0 {
		return
	}
	due := qs.pacer.Due(i)
	qs.t.measure(i, due, results.Queue, at-due)
}

// frozen is a task held by a process that a fault can stop or kill.
type frozen interface {
	Freeze(until time.Time)
}

// waker is a task whose process, stopped by a stall, answers once it runs again, before
// the task's work: the job's code runs in that process, so a worker that ends itself on
// waking (a timeout that fell due while it was stopped) never does that work. It reports
// queueimpl.ErrWorkerGone for one that did.
type waker interface {
	Wake(ctx context.Context) error
}

// terminable is a task held by a process that a deploy can stop: SIGTERM, then SIGKILL
// once grace has passed. The channel returned closes once the process is gone; it is nil
// when no process holds this task.
type terminable interface {
	Terminate(grace time.Duration) <-chan struct{}
}
