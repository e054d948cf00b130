package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// queueRun is a running QueueSale: the kind the frame runs for a queue design.
type queueRun struct {
	QueueSale
	r     Redis
	impl  queueimpl.Impl
	q     queueimpl.Queue // the workers' and buyers' view
	admin queueimpl.Queue // for the backlog, past any fault
	inj   *faults.Injector
	// starter is the design's own processes, if it has any; log what they logged.
	starter queueimpl.Starter
	log     string
	k       queueKeys
	ledger  *oracle.QueueLedger
	final   *oracle.QueueFinal
	t       *tally
	t0      time.Time
	pacer   Pacer

	enqueued   []atomic.Int64 // when order i was accepted, ns since t0; 0 if not
	taken      atomic.Int64   // takes so far, for the quiet-period check
	busy       atomic.Int64   // tasks live workers hold
	settled    atomic.Int64   // orders fulfilled or refused so far (first time each)
	settledSet sync.Map

	mu      sync.Mutex
	backlog []results.Sample
	workers sync.WaitGroup
	nextID  atomic.Int64
}

var _ kind = (*queueRun)(nil)

func newQueueRun(s QueueSale, r Redis, impl queueimpl.Impl, inj *faults.Injector) *queueRun {
	n := s.Shard.buyers(s.Buyers) // a shard's own orders; its workers take any shard's
	qs := &queueRun{
		QueueSale: s, r: r, impl: impl, inj: inj, k: s.keys(),
		ledger:   &oracle.QueueLedger{InitialStock: s.Stock, Orders: make([]oracle.Enqueued, n), Lease: s.Visibility},
		enqueued: make([]atomic.Int64, n),
	}
	qs.q = impl.New(queueimpl.Env{Client: r.Locks[0], Keys: qs.k.queue, Visibility: s.Visibility, Topology: r.Topology})
	qs.admin = impl.New(queueimpl.Env{Client: r.LockAdmins[0], Keys: qs.k.queue, Visibility: s.Visibility})
	if st, ok := qs.q.(queueimpl.Starter); ok {
		qs.starter, qs.admin = st, qs.q // one pool of processes serves all
	}
	return qs
}

func (qs *queueRun) horizon() time.Duration { return qs.Visibility }

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
	if qs.Shard.Sharded() && qs.starter != nil {
		return fmt.Errorf("queue-sale: %s runs in processes of its own; a sharded sale runs the built-in designs", qs.impl.Name)
	}
	if !qs.Shard.lead() {
		return nil // the first shard writes the stock and prepares the queue, before the shards meet
	}
	if err := qs.r.StockAdmin.Del(ctx, qs.k.stockKeys()...).Err(); err != nil {
		return fmt.Errorf("queue-sale: set up: %w", err)
	}
	if err := qs.r.LockAdmins[0].Del(ctx, qs.k.queue.All()...).Err(); err != nil {
		return fmt.Errorf("queue-sale: set up: %w", err)
	}
	if err := qs.r.StockAdmin.Set(ctx, qs.k.stock.Key, qs.Stock, qs.KeyLease).Err(); err != nil {
		return fmt.Errorf("queue-sale: set up: %w", err)
	}
	if qs.starter != nil {
		sale := queueimpl.Sale{Keys: qs.k.queue, Visibility: qs.Visibility, Conns: qs.Conns}
		if qs.inj != nil {
			sale.Steps, sale.Stepped = qs.inj.Steps(), qs.inj.Stepped
		}
		if err := qs.starter.Start(ctx, sale); err != nil {
			return err
		}
	}
	if su, ok := qs.admin.(queueimpl.Setupper); ok {
		return su.Setup(ctx)
	}
	return nil
}

func (qs *queueRun) cleanUp(ctx context.Context) error {
	if qs.starter != nil {
		qs.log = qs.starter.Stop()
	}
	if !qs.Shard.lead() {
		return nil // the first shard deletes the keys, once every shard is done
	}
	err := errors.Join(qs.r.StockAdmin.Del(ctx, qs.k.stockKeys()...).Err(), qs.r.LockAdmins[0].Del(ctx, qs.k.queue.All()...).Err())
	if err != nil {
		return fmt.Errorf("queue-sale: clean up: %w", err)
	}
	return nil
}

// run starts workers, the reaper and the backlog sampler, sends the buyers, and stops the
// workers once every order is settled or nothing moves.
func (qs *queueRun) run(ctx context.Context, t *tally) {
	// A shard's times count from the sale's one start, as every shard's do: its orders
	// and its takes then compare with the others' (to within the clocks' offset, read
	// from Redis's) when they are merged.
	qs.t, qs.t0, qs.pacer = t, cmp.Or(t.start, time.Now()), qs.Pacer()
	wctx, stopWorkers := context.WithCancel(ctx)
	for i := range qs.Shard.buyers(qs.Workers) { // a shard runs its share of the workers
		if i%4096 == 0 && ctx.Err() != nil { // many workers take a while to start
			break
		}
		qs.startWorker(wctx)
	}
	bg, stopBG := context.WithCancel(ctx)
	var bgDone sync.WaitGroup
	bgDone.Go(func() { qs.sample(bg) })
	if reaper, ok := qs.admin.(queueimpl.Reaper); ok {
		bgDone.Go(func() { qs.reap(bg, reaper, qs.inj.Reapers()) })
	}
	qs.sendBuyers(ctx)
	qs.awaitSettled(ctx)
	stopWorkers()
	qs.workers.Wait()
	stopBG()
	bgDone.Wait()
}

// sendBuyers enqueues every buyer's order as the sale's pacer says. One sender per
// connection sends them (see feed), so a buyer costs no goroutine before its order goes
// out. Orders never sent because the sale was stopped are not accepted.
func (qs *queueRun) sendBuyers(ctx context.Context) {
	feed(ctx, len(qs.enqueued), qs.Conns, qs.Sale.pacer(), qs.t0,
		func(_, i int, _ time.Time) { qs.enqueue(ctx, i) }, func(int) {})
	if qs.Shard.Sharded() { // what the shards wait for together: see settledAll
		bg := context.WithoutCancel(ctx)
		pipe := qs.r.StockAdmin.TxPipeline()
		pipe.IncrBy(bg, qs.k.accepted, int64(qs.accepted()))
		pipe.SAdd(bg, qs.k.sent, qs.Shard.Index)
		if _, err := pipe.Exec(bg); err != nil && !ended(ctx) {
			qs.t.failed(err)
		}
	}
}

// enqueue is buyer i's order. Its latency counts from when it was due (see settle).
func (qs *queueRun) enqueue(ctx context.Context, i int) {
	g := qs.Shard.Global(i)
	o := queueimpl.Order{ID: strconv.Itoa(g), Seq: int64(g)}
	err := qs.q.Enqueue(ctx, o)
	done := time.Since(qs.t0)
	qs.ledger.Orders[i] = oracle.Enqueued{ID: o.ID, Accepted: err == nil, InDoubt: inDoubt(err), Done: done}
	switch {
	case err == nil:
		qs.enqueued[i].Store(int64(done))
	case !ended(ctx):
		qs.t.failed(err)
		qs.t.finished(false)
	}
}

// awaitSettled returns when every accepted order is settled, the queue is empty and no
// worker holds a task (so a task held or pending is seen through, duplicate or not), or
// when no task was taken for twice the visibility timeout plus 300ms (counted from when
// a server fault last ended: a restart's downtime is not a quiet queue), or when ctx
// ends.
//
// A design served by a pool of processes whose library pulls tasks itself (RQ's own
// loop, Celery's worker) holds a task in one process until a worker asks that one: the
// quiet period then also lasts until every process answered two asks with nothing since
// the last take, by count, not by time. Timed at two asks a process, 3 of 80 Celery sales
// with no fault ended with a task offered in a process nobody had asked for 2 s (LOST 1).
// Past quietCeiling a sale ends anyway: a pool whose asks all fail stops no sale for
// good. A library that hands a
// dead worker's task on by a clock of its own, later than the visibility timeout
// (asynq's recoverer, a minute and more), is waited for as long as it says.
func (qs *queueRun) awaitSettled(ctx context.Context) {
	quiet := 2*qs.Visibility + 300*time.Millisecond
	swept := func() bool { return true }
	if p, ok := qs.q.(pooled); ok {
		quiet = max(quiet, 2*time.Duration(p.Procs())*dequeueWait/time.Duration(max(qs.Workers, 1)))
		swept = p.Swept
	}
	if r, ok := qs.q.(redelivering); ok {
		quiet = max(quiet, r.Redelivery()+300*time.Millisecond)
	}
	last, lastChange := qs.takes(ctx), time.Now()
	wait.Every(ctx, 20*time.Millisecond, func() bool {
		if qs.settledAll(ctx) && qs.busy.Load() == 0 {
			if n, err := qs.admin.Len(ctx); err == nil && n == 0 {
				return false
			}
		}
		if n := qs.takes(ctx); n != last {
			last, lastChange = n, time.Now()
		}
		if settled := qs.inj.ServersSettled(); settled.After(lastChange) {
			lastChange = settled
		}
		still := time.Since(lastChange)
		return still <= quiet || still <= quietCeiling && !swept()
	})
}

// quietCeiling bounds how long a pooled design's sale waits, once nothing moves, for
// its processes to be asked (see awaitSettled).
const quietCeiling = 30 * time.Second

// settledAll reports whether every accepted order is settled: of this sale, or, in a
// shard, of every shard's, counted together in Redis once every shard's buyers have sent
// theirs.
func (qs *queueRun) settledAll(ctx context.Context) bool {
	if !qs.Shard.Sharded() {
		return qs.settled.Load() >= int64(qs.accepted())
	}
	pipe := qs.r.StockAdmin.Pipeline()
	sent, accepted, settled := pipe.SCard(ctx, qs.k.sent), pipe.Get(ctx, qs.k.accepted), pipe.SCard(ctx, qs.k.settled)
	if _, err := pipe.Exec(ctx); err != nil {
		return false
	}
	n, _ := accepted.Int64()
	return sent.Val() >= int64(qs.Shard.Count) && settled.Val() >= n
}

// takes is how many tasks were taken: by this sale's workers, or, in a shard, by every
// shard's, so that a shard whose workers are idle waits while another's still work.
func (qs *queueRun) takes(ctx context.Context) int64 {
	if !qs.Shard.Sharded() {
		return qs.taken.Load()
	}
	n, _ := qs.r.StockAdmin.Get(ctx, qs.k.taken).Int64()
	return n
}

// pooled is a queue design served by a pool of processes: Procs is its size, Swept
// whether each of them answered two asks with nothing since the last take.
type pooled interface {
	Procs() int
	Swept() bool
}

// redelivering is a queue whose library hands a dead worker's task on by a clock of its
// own: Redelivery is the longest that takes, 0 where the visibility timeout says it.
type redelivering interface{ Redelivery() time.Duration }

func (qs *queueRun) accepted() int {
	n := 0
	for i := range qs.enqueued {
		if qs.enqueued[i].Load() != 0 {
			n++
		}
	}
	return n
}

// sample records the backlog every 50 ms or so: the samples are 25 to 75 ms apart, at random: a process adapter's len takes the pool's
// next idle process, and at a fixed 50 ms it fell in step with the workers' turns, taking
// the same process every time it came up, whose task then waited.
func (qs *queueRun) sample(ctx context.Context) {
	for wait.Sleep(ctx, 25*time.Millisecond+rand.N(50*time.Millisecond)) == nil {
		if n, err := qs.admin.Len(ctx); err == nil {
			qs.mu.Lock()
			qs.backlog = append(qs.backlog, results.Sample{At: time.Since(qs.t0), N: n})
			qs.mu.Unlock()
		}
	}
}

// reap runs the design's reaper every quarter of the visibility timeout, as n reapers
// in step (faults.Reclaimers).
func (qs *queueRun) reap(ctx context.Context, r queueimpl.Reaper, n int) {
	wait.Every(ctx, max(qs.Visibility/4, 10*time.Millisecond), func() bool {
		if n == 1 {
			r.Reap(ctx)
			return true
		}
		// Several reapers on one schedule, each round started together: held at a gate
		// until all are ready, since on a loaded machine the first one started could
		// otherwise finish its round before the last began, and none would be in step.
		moved := make([]int, n)
		gate := make(chan struct{})
		var ready, wg sync.WaitGroup
		ready.Add(n)
		for i := range n {
			wg.Go(func() {
				ready.Done()
				<-gate
				moved[i], _ = r.Reap(ctx)
			})
		}
		ready.Wait()
		close(gate)
		wg.Wait()
		qs.inj.Reaped(moved)
		return true
	})
}

// readFinal reads the stock and the logs of effects and refusals.
func (qs *queueRun) readFinal(ctx context.Context) error {
	if !qs.Shard.lead() {
		return nil // the first shard reads it, once every shard is done
	}
	c := qs.r.StockAdmin
	stock, err := c.Get(ctx, qs.k.stock.Key).Int64()
	if err != nil {
		return fmt.Errorf("queue-sale: read final stock: %w", err)
	}
	effects, err1 := c.LRange(ctx, qs.k.effects, 0, -1).Result()
	refused, err2 := c.LRange(ctx, qs.k.refused, 0, -1).Result()
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("queue-sale: read final state: %w", err)
	}
	qs.final = &oracle.QueueFinal{Stock: stock, Effects: effects, Refused: refused}
	return nil
}

// conclude runs the queue oracles and fills run. The lock-sale figures the table shows
// (sold, final stock, sales/s) are filled from the queue's.
func (qs *queueRun) conclude(run *results.Run, unfired []string) {
	run.Params = results.Params{
		Buyers: qs.Buyers, Stock: qs.Stock, Critical: "queue", Think: qs.Work.String(), Conns: qs.Conns,
		Seed: qs.Seed, Faults: qs.Faults.String(), Workers: qs.Workers, Fulfil: string(qs.Fulfil),
		Visibility: qs.Visibility.String(), Rate: qs.Rate, RampTo: qs.RampTo,
	}
	if qs.Warmup > 0 {
		run.Params.Warmup = qs.Warmup.String()
	}
	documented := qs.impl.Documented
	if d, ok := qs.q.(queueimpl.Documenter); ok {
		documented = d.Documented()
	}
	run.Backlog, run.Log = qs.backlog, qs.log
	run.Latency = qs.t.latencies(results.Queue)
	judgeQueue(run, qs.ledger, qs.final, qs.impl, documented.For(qs.Fulfil == Idempotent), qs.Faults, unfired)
}

// judgeQueue runs the queue oracles on l and f and fills run: its verdict against what
// the design documents under plan, the figures the table shows (sold, final stock,
// sales/s, filled from the queue's) and the recoveries. run.Params and run.Latency are
// the caller's.
func judgeQueue(run *results.Run, l *oracle.QueueLedger, f *oracle.QueueFinal, impl queueimpl.Impl, documented faults.Verdicts, plan faults.Plan, unfired []string) {
	q := oracle.CheckQueue(l, f, impl.Ordered)
	run.Kind, run.Impl, run.Queue = results.QueueSale, impl.Name, &q
	run.Oracle = oracle.Report{Buyers: len(l.Orders), Bought: q.Fulfilled, InitialStock: l.InitialStock,
		FinalStock: q.FinalStock, FinalUnknown: q.FinalUnknown}
	want, _ := documented.For(plan)
	run.Judge(q.Outcome(), unfired, want)
	run.Undocumented = !documented.Documented()
	var last time.Duration
	var sold []time.Duration
	for _, t := range l.Takes {
		if t.Result == oracle.TakeFulfilled {
			last = max(last, t.Fulfilled)
			sold = append(sold, t.Fulfilled)
		}
	}
	run.Sales = results.Timeline(sold)
	if last > 0 {
		run.SalesPerSec = float64(q.Fulfilled) / last.Seconds()
	}
	if after, lost := oracle.Recoveries(l); len(after)+lost > 0 {
		run.Recovery = &results.Recoveries{Deaths: len(after) + lost, Redelivered: len(after), Never: lost}
		if d, ok := results.Durations(after); ok {
			if run.Latency == nil {
				run.Latency = map[string]results.Latency{}
			}
			run.Latency[results.Recovery.String()] = d
		}
	}
}

// inDoubt reports whether a failed command may have run all the same: anything but an
// error reply from Redis (which refuses the command whole) leaves that open, as when the
// server dies between writing and replying.
func inDoubt(err error) bool {
	var reply redis.Error
	return err != nil && !errors.As(err, &reply)
}
