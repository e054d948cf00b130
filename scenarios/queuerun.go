package scenarios

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// Run runs the queue sale on r, the queue on r.Locks[0] and the stock on r.Stock, and
// returns its record. It touches only keys under s.Prefix and deletes them at the end.
// It ends once every accepted order was fulfilled or refused, or when no task has been
// taken for a little over twice the visibility timeout (what is left then is lost).
func (s QueueSale) Run(ctx context.Context, r Redis, impl queueimpl.Impl) (results.Run, error) {
	if err := s.Validate(); err != nil {
		return results.Run{}, err
	}
	s = s.WithDefaults()
	r = r.withDefaults()
	inj, err := faults.New(s.Faults, r.Servers, s.Visibility, s.Prefix)
	if err != nil {
		return results.Run{}, err
	}
	qs := newQueueRun(s, r, impl, inj)
	if err := qs.setUp(ctx); err != nil {
		return results.Run{}, err
	}
	warm(ctx, r, s.Conns)
	before, statsErr := commandStats(ctx, r.admins())
	if err := inj.Start(ctx); err != nil {
		return results.Run{}, err
	}
	started := time.Now()
	goneErr := during(ctx, r.watched(s.Faults), keeper{lease: s.KeyLease, horizon: s.Visibility}, qs.leases(), inj, qs.run)

	after, cancel := afterSale(ctx, goneErr)
	defer cancel()
	var afterStats results.ServerStats
	if statsErr == nil {
		afterStats, statsErr = commandStats(after, r.admins())
	}
	final, finalErr := qs.final(after)
	cleanErr := qs.cleanUp(after)

	run := s.record(impl, started, qs, final, kindNames(inj.NotFired()))
	run.Events = inj.Events()
	if statsErr == nil {
		run.Commands = results.NewCommands(before, afterStats, run.Queue.Fulfilled)
	}
	run.Errors = int(qs.failures.Load())
	if e := qs.firstErr.Load(); e != nil {
		run.FirstError = (*e).Error()
	}
	runErr := runError(goneErr, errors.Join(qs.runErr(), finalErr), cleanErr)
	switch {
	case runErr != nil:
		run.Complete, run.Error = false, runErr.Error()
	case ended(ctx):
		run.Complete, run.Error = false, "interrupted"
	}
	return run, runErr
}

// queueRun is a running QueueSale.
type queueRun struct {
	QueueSale
	r        Redis
	impl     queueimpl.Impl
	q        queueimpl.Queue // the workers' and buyers' view
	admin    queueimpl.Queue // for the backlog, past any fault
	inj      *faults.Injector
	k        queueKeys
	ledger   *oracle.QueueLedger
	rec      *results.Recorder
	t0       time.Time
	tolerant bool

	enqueued   []atomic.Int64 // when order i was accepted, ns since t0; 0 if not
	taken      atomic.Int64   // takes so far, for the quiet-period check
	busy       atomic.Int64   // tasks live workers hold
	settled    atomic.Int64   // orders fulfilled or refused so far (first time each)
	settledSet sync.Map

	mu      sync.Mutex
	takes   []oracle.Take
	backlog []results.Sample
	workers sync.WaitGroup
	nextID  atomic.Int64

	failures atomic.Int64
	firstErr atomic.Pointer[error]
}

func newQueueRun(s QueueSale, r Redis, impl queueimpl.Impl, inj *faults.Injector) *queueRun {
	qs := &queueRun{
		QueueSale: s, r: r, impl: impl, inj: inj, k: s.keys(),
		ledger:   &oracle.QueueLedger{InitialStock: s.Stock, Orders: make([]oracle.Enqueued, s.Buyers)},
		rec:      results.NewRecorder(4 * runtime.GOMAXPROCS(0)),
		enqueued: make([]atomic.Int64, s.Buyers),
	}
	needs := s.Faults.Needs()
	qs.tolerant = needs.Owned || needs.Proxy
	qs.q = impl.New(queueimpl.Env{Client: r.Locks[0], Keys: qs.k.queue, Visibility: s.Visibility})
	qs.admin = impl.New(queueimpl.Env{Client: r.LockAdmins[0], Keys: qs.k.queue, Visibility: s.Visibility})
	return qs
}

// leases are the sale's keys by server, for KeyLease: the seed queue's lock keeps its
// own TTL (see leased).
func (qs *queueRun) leases() []leased {
	q := qs.k.queue
	return []leased{
		{c: qs.r.StockAdmin, data: qs.k.stockKeys()},
		{c: qs.r.LockAdmins[0], data: []string{q.Queue, q.Processing, q.Taken}, locks: []string{q.Lock}},
	}
}

func (qs *queueRun) setUp(ctx context.Context) error {
	if err := qs.r.StockAdmin.Del(ctx, qs.k.stockKeys()...).Err(); err != nil {
		return fmt.Errorf("queue-sale: set up: %w", err)
	}
	if err := qs.r.LockAdmins[0].Del(ctx, qs.k.queue.All()...).Err(); err != nil {
		return fmt.Errorf("queue-sale: set up: %w", err)
	}
	if err := qs.r.StockAdmin.Set(ctx, qs.k.stock.Key, qs.Stock, qs.KeyLease).Err(); err != nil {
		return fmt.Errorf("queue-sale: set up: %w", err)
	}
	if su, ok := qs.admin.(queueimpl.Setupper); ok {
		return su.Setup(ctx)
	}
	return nil
}

func (qs *queueRun) cleanUp(ctx context.Context) error {
	err := errors.Join(qs.r.StockAdmin.Del(ctx, qs.k.stockKeys()...).Err(), qs.r.LockAdmins[0].Del(ctx, qs.k.queue.All()...).Err())
	if err != nil {
		return fmt.Errorf("queue-sale: clean up: %w", err)
	}
	return nil
}

// run starts workers, the reaper and the backlog sampler, sends the buyers, and stops the
// workers once every order is settled or nothing moves.
func (qs *queueRun) run(ctx context.Context) {
	qs.t0 = time.Now()
	wctx, stopWorkers := context.WithCancel(ctx)
	for i := range qs.Workers {
		if i%4096 == 0 && ctx.Err() != nil { // many workers take a while to start
			break
		}
		qs.startWorker(wctx)
	}
	bg, stopBG := context.WithCancel(ctx)
	var bgDone sync.WaitGroup
	bgDone.Go(func() { qs.sample(bg) })
	if reaper, ok := qs.admin.(queueimpl.Reaper); ok {
		bgDone.Go(func() { qs.reap(bg, reaper) })
	}
	qs.sendBuyers(ctx)
	qs.awaitSettled(ctx)
	stopWorkers()
	qs.workers.Wait()
	stopBG()
	bgDone.Wait()
}

// sendBuyers enqueues every buyer's order: all at once, or as they arrive at Rate. One
// sender per connection sends them (see feed), so a buyer costs no goroutine before its
// order goes out. Orders never sent because the sale was stopped are not accepted.
func (qs *queueRun) sendBuyers(ctx context.Context) {
	feed(ctx, qs.Buyers, qs.Conns, qs.Rate, 0, qs.t0,
		func(i int, _ time.Time) { qs.enqueue(ctx, i) }, func(int) {})
}

func (qs *queueRun) enqueue(ctx context.Context, i int) {
	o := queueimpl.Order{ID: strconv.Itoa(i), Seq: int64(i)}
	err := qs.q.Enqueue(ctx, o)
	done := time.Since(qs.t0)
	qs.ledger.Orders[i] = oracle.Enqueued{ID: o.ID, Accepted: err == nil, Done: done}
	if err == nil {
		qs.enqueued[i].Store(int64(done))
	} else if !ended(ctx) {
		qs.failed(err)
	}
}

// awaitSettled returns when every accepted order is settled, the queue is empty and no
// worker holds a task (so a task held or pending is seen through, duplicate or not), or
// when no task was taken for twice the visibility timeout plus 300ms, or when ctx ends.
func (qs *queueRun) awaitSettled(ctx context.Context) {
	quiet := 2*qs.Visibility + 300*time.Millisecond
	last, lastChange := qs.taken.Load(), time.Now()
	every(ctx, 20*time.Millisecond, func() bool {
		if qs.settled.Load() >= int64(qs.accepted()) && qs.busy.Load() == 0 {
			if n, err := qs.admin.Len(ctx); err == nil && n == 0 {
				return false
			}
		}
		if n := qs.taken.Load(); n != last {
			last, lastChange = n, time.Now()
		}
		return time.Since(lastChange) <= quiet
	})
}

func (qs *queueRun) accepted() int {
	n := 0
	for i := range qs.enqueued {
		if qs.enqueued[i].Load() != 0 {
			n++
		}
	}
	return n
}

// sample records the backlog every 50ms.
func (qs *queueRun) sample(ctx context.Context) {
	every(ctx, 50*time.Millisecond, func() bool {
		if n, err := qs.admin.Len(ctx); err == nil {
			qs.mu.Lock()
			qs.backlog = append(qs.backlog, results.Sample{At: time.Since(qs.t0), N: n})
			qs.mu.Unlock()
		}
		return true
	})
}

// reap runs the design's reaper every quarter of the visibility timeout.
func (qs *queueRun) reap(ctx context.Context, r queueimpl.Reaper) {
	every(ctx, max(qs.Visibility/4, 10*time.Millisecond), func() bool { r.Reap(ctx); return true })
}

func (qs *queueRun) failed(err error) {
	qs.failures.Add(1)
	qs.firstErr.CompareAndSwap(nil, &err)
}

// runErr is the error that makes the run incomplete: any, without faults on servers.
func (qs *queueRun) runErr() error {
	if e := qs.firstErr.Load(); e != nil && !qs.tolerant {
		return *e
	}
	return nil
}

// final reads the stock and the logs of effects and refusals; nil when it cannot.
func (qs *queueRun) final(ctx context.Context) (*oracle.QueueFinal, error) {
	c := qs.r.StockAdmin
	stock, err := c.Get(ctx, qs.k.stock.Key).Int64()
	if err != nil {
		return nil, fmt.Errorf("queue-sale: read final stock: %w", err)
	}
	effects, err1 := c.LRange(ctx, qs.k.effects, 0, -1).Result()
	refused, err2 := c.LRange(ctx, qs.k.refused, 0, -1).Result()
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("queue-sale: read final state: %w", err)
	}
	return &oracle.QueueFinal{Stock: stock, Effects: effects, Refused: refused}, nil
}
