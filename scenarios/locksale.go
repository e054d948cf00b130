package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// lockSale is a running FlashSale: the kind the frame runs for a lock design. Buyer i
// writes only ledger entry i, and reaches Redis through application instance i mod Apps.
type lockSale struct {
	FlashSale
	r       Redis // the first application's clients, and the admins
	impl    lockimpl.Impl
	apps    []*app
	oneCall bool // a purchase is one call on a connection (see runQueued)
	inj     *faults.Injector
	spike   func() time.Duration // a latency spike before a call, if the plan has them
	stock   lockimpl.Stock
	lockKey string
	pool    int // the design's processes per instance (Impl.Procs), 0 for none
	ledger  *oracle.Ledger
	final   *oracle.Final
	t       *tally
	t0      time.Time

	// ctx is the running sale's context, for the buyers' turns on the executors;
	// giveUp is when each buyer's retry timeout ends (from t0), set at its first try;
	// buying counts the buyers who started and are not done.
	ctx    context.Context
	giveUp []time.Duration
	buying sync.WaitGroup
	// over is set, and overAt holds when (from t0), once ctx has ended: a waiting buyer's
	// turn then only notes that it was cut off (see drop), so that tens of millions of
	// them end within the 2 s a signal is promised.
	over   atomic.Bool
	overAt atomic.Int64
	// owned marks the buyers a goroutine of their own settles, for cutOff; written before
	// that goroutine starts, by the executor or the arrivals.
	owned []bool

	log string // what the design's processes logged

	renewersMu sync.Mutex
	renewers   []lockimpl.Renewer // read at the end: a leaked renewal comes late
	holds      holds
	holdsMu    sync.Mutex // guards ledger.Holds
}

// app is one application instance of a running sale: its buyers' clients, the design
// built on them, and the executor and waiters that run its buyers.
type app struct {
	r         Redis
	locker    lockimpl.Locker // tries from the executor's goroutines
	executed  lockimpl.Locker // tries from a goroutine of one's own, through the executor
	half      lockimpl.HalfLocker
	purchaser lockimpl.Purchaser
	script    lockimpl.Purchaser // the Atomic critical section
	starter   lockimpl.Starter   // the design's own processes, if it has any
	x         *executor
	w         *waiters
	door      door // the buyers it serves at once, and those waiting for a place
}

var _ kind = (*lockSale)(nil)

// newLockSale builds the sale, with one copy of the design per application instance
// (apps: their clients, the first being r's).
func newLockSale(s FlashSale, r Redis, apps []Redis, impl lockimpl.Impl, inj *faults.Injector) *lockSale {
	ls := &lockSale{FlashSale: s, r: r, impl: impl, inj: inj, spike: inj.Spike(), ledger: oracle.NewLedger(s.Shard.buyers(s.Buyers), s.Stock)}
	ls.stock, ls.lockKey = s.keys()
	if impl.Procs != nil {
		ls.pool = impl.Procs(ls.served())
		if ls.Serve == 0 {
			ls.Serve = ls.pool // a process serves one buyer at a time
		}
	}
	if impl.Retry != nil {
		ls.Retry = impl.Retry(ls.Retry)
	}
	ls.Retry.Abandon = nil // the waiters ask soldOut themselves, on the executor
	for _, ar := range apps {
		a := &app{r: ar, script: lockimpl.Lua{Client: ar.Stock}}
		env := lockimpl.Env{Locks: ar.Locks[:impl.LockNodes()], Stock: ar.Stock, Retry: ls.Retry, Topology: ar.Topology}
		if impl.NewPurchaser != nil {
			a.purchaser = impl.NewPurchaser(env)
			a.starter, _ = a.purchaser.(lockimpl.Starter)
		} else {
			a.locker = impl.NewLocker(env)
			a.starter, _ = a.locker.(lockimpl.Starter)
			a.half, _ = a.locker.(lockimpl.HalfLocker)
			if s.Faults.Needs().Disrupts() { // see tally.tolerant
				a.locker = persistent{a.locker, ls}
			}
			a.executed = &executed{a.locker, a}
		}
		ls.apps = append(ls.apps, a)
	}
	_, retries := ls.apps[0].purchaser.(tryer)
	ls.oneCall = ls.apps[0].purchaser != nil && !retries
	return ls
}

// app is the application instance that serves buyer i.
func (ls *lockSale) app(i int) *app { return ls.apps[ls.appOf(i)] }

// appOf is the index of the application instance that serves buyer (or scheduler) i.
func (ls *lockSale) appOf(i int) int { return i % len(ls.apps) }

func (ls *lockSale) horizon() time.Duration { return ls.Retry.Timeout }

// outlasts reports whether some holder's own work (its think time) reaches the TTL: a
// sale of slow holders with no fault, as the slow-holder preset and a sweep of the TTL
// make.
func (ls *lockSale) outlasts() bool {
	return ls.apps[0].locker != nil && ls.Critical == ReadThinkWrite && ls.TTL > 0 && ls.Think.Longest() >= ls.TTL
}

// leases are the sale's keys by server, for KeyLease.
func (ls *lockSale) leases() []leased {
	sets := []leased{{c: ls.r.StockAdmin, data: ls.dataKeys()}}
	for _, c := range ls.r.LockAdmins {
		sets = append(sets, leased{c: c, data: []string{ls.lockKey + ":counter"}, locks: []string{ls.lockKey}})
	}
	return sets
}

// dataKeys are the sale's keys on the stock server: the stock's and the witness's.
func (ls *lockSale) dataKeys() []string {
	keys := append(ls.stock.Keys(), witnessKeys(ls.Prefix)...)
	if ls.Drop.On() {
		next, fires := dropKeys(ls.Prefix)
		keys = append(keys, next, fires)
	}
	return keys
}

// setUp writes the stock, clears what an earlier sale with the same prefix left, and
// starts the design's processes and warms the pools of the instances past the first (the
// frame warms the first). Of a sharded sale's shards, only the first writes.
func (ls *lockSale) setUp(ctx context.Context) error {
	if err := ls.writeStock(ctx); err != nil {
		return err
	}
	for _, a := range ls.apps {
		if a.starter == nil {
			continue
		}
		if err := a.starter.Start(ctx, lockimpl.Sale{Lock: ls.lockKey, Stock: ls.stock, TTL: ls.TTL, Conns: ls.served()}); err != nil {
			return err
		}
	}
	for _, a := range ls.apps[1:] {
		a.r.warm(ctx, ls.Conns)
	}
	return nil
}

// writeStock clears the sale's keys and writes the stock.
func (ls *lockSale) writeStock(ctx context.Context) error {
	if !ls.Shard.lead() {
		return nil
	}
	if err := ls.r.StockAdmin.Del(ctx, ls.dataKeys()...).Err(); err != nil {
		return fmt.Errorf("flash-sale: set up: del: %w", err)
	}
	for _, c := range ls.r.LockAdmins {
		if err := c.Del(ctx, ls.lockKeys()...).Err(); err != nil {
			return fmt.Errorf("flash-sale: set up: del lock: %w", err)
		}
	}
	stock := ls.Stock
	if ls.Drop.On() {
		stock = 0 // the drop's waves put it on sale
	}
	if err := ls.r.StockAdmin.Set(ctx, ls.stock.Key, stock, ls.KeyLease).Err(); err != nil {
		return fmt.Errorf("flash-sale: set up: set stock: %w", err)
	}
	return nil
}

// cleanUp stops the design's processes, if it has any, and deletes every key the sale
// wrote.
func (ls *lockSale) cleanUp(ctx context.Context) error {
	var logs []string
	for _, a := range ls.apps {
		if a.starter != nil {
			if l := a.starter.Stop(); l != "" {
				logs = append(logs, l)
			}
		}
	}
	ls.log = strings.Join(logs, "\n")
	if !ls.Shard.lead() {
		return nil // the first shard deletes the keys, once every shard is done
	}
	errs := []error{ls.r.StockAdmin.Del(ctx, ls.dataKeys()...).Err()}
	for _, c := range ls.r.LockAdmins {
		errs = append(errs, c.Del(ctx, ls.lockKeys()...).Err())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("flash-sale: clean up: %w", err)
	}
	return nil
}

// run starts every buyer as the sale's pacer says, and waits for all of them. When ctx
// ends before every buyer started, the rest are counted as never started.
func (ls *lockSale) run(ctx context.Context, t *tally) {
	ls.t, ls.ctx = t, ctx
	ls.t0 = time.Now()
	defer context.AfterFunc(ctx, func() {
		ls.overAt.Store(int64(time.Since(ls.t0)))
		ls.over.Store(true)
	})()
	if ls.oneCall {
		ls.runQueued(ctx)
		return
	}
	ls.giveUp = make([]time.Duration, ls.buyers())
	ls.owned = make([]bool, ls.buyers())
	room := ls.buyers()/len(ls.apps) + 1
	stop := make(chan struct{})
	var sleepers sync.WaitGroup
	for _, a := range ls.apps {
		a.x = newExecutor(ls.Conns, room, func(i int, check bool) {
			if check {
				ls.check(a, i)
			} else {
				ls.turn(a, i)
			}
		}, ls.spike)
		a.w = newWaiters(ls.t0, a.x)
		sleepers.Go(func() { a.w.run(ctx, stop) })
	}
	defer func() {
		close(stop)
		sleepers.Wait()
		for _, a := range ls.apps {
			a.x.stop()
		}
	}()
	p := ls.pacer()
	next := 0
	arrived := arrive(ctx, ls.buyers(), p, ls.t0, func(n int) {
		for ; next < n; next++ {
			// Starting a million buyers takes a while: a stop meanwhile is heard.
			if next%4096 == 0 && ctx.Err() != nil {
				return
			}
			ls.arrive(ctx, next, ls.t0.Add(p.Due(next)))
		}
	})
	ls.interrupt(min(arrived, next))
	done := make(chan struct{})
	go func() {
		ls.buying.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		if ls.Serve == 0 {
			ls.cutOff()
		}
		<-done
	}
}

// cutOff settles in one pass every buyer still waiting for the lock when the sale was
// stopped, once the executors have left their queues: tens of millions of turns, each
// only to say it was cut off, took seconds past a signal. The buyers a goroutine of
// their own settles (holders, a crashing acquirer) are left to it. Not with Serve, where
// a leaving holder lets the next queued buyer in.
func (ls *lockSale) cutOff() {
	for _, a := range ls.apps {
		a.x.abandon() // after it, no executor touches an entry
	}
	at := time.Since(ls.t0) // overAt may not be stored yet: ctx's AfterFunc runs on its own
	started := ls.ledger.Started()
	n := 0
	for i := range started {
		if e := &started[i]; !ls.owned[i] && e.Outcome == oracle.Pending {
			e.Outcome, e.Done = oracle.Interrupted, at
			n++
		}
	}
	ls.buying.Add(-n)
}

// interrupt notes that the buyers from the ith on never started.
func (ls *lockSale) interrupt(from int) { ls.ledger.Unstarted = ls.buyers() - from }

// buyers is how many buyers this process runs: the sale's, or its shard's.
func (ls *lockSale) buyers() int { return len(ls.ledger.Entries) }

// served is the connections a design's own processes match (lockimpl.Sale.Conns): the
// sale's, or its buyers when fewer come, whom no more processes could serve at once.
func (ls *lockSale) served() int { return max(min(ls.Conns, ls.buyers()), 1) }

// id is buyer i's number in the sale, the order it records and the draws it makes: in a
// shard, its number in the whole sale.
func (ls *lockSale) id(i int) int { return ls.Shard.Global(i) }

// runQueued runs a sale whose purchases are one call each. Such a buyer has nothing to
// wait for but a connection, so it needs no goroutine of its own: buyers queue, first
// come first served, and one worker per connection of each application instance buys for
// each in turn (see feed). That saves the goroutine and two hand-overs per purchase,
// which is what lets the lua sale keep pace with redis-benchmark. Under a closed load
// every buyer arrives at the start.
func (ls *lockSale) runQueued(ctx context.Context) {
	feed(ctx, ls.buyers(), ls.Conns*len(ls.apps), ls.pacer(), ls.t0,
		func(w, i int, at time.Time) { ls.buyQueued(ctx, ls.app(w), i, at) }, ls.interrupt)
}

// readFinal reads the outcome from Redis.
func (ls *lockSale) readFinal(ctx context.Context) error {
	if !ls.Shard.lead() {
		return nil // the first shard reads it, once every shard is done
	}
	c := ls.r.StockAdmin
	stock, err := c.Get(ctx, ls.stock.Key).Int64()
	// A server that answers without the stock lost it (a failover promoted a replica
	// that never had it): a finding for the oracles, not an unreadable state.
	gone := errors.Is(err, redis.Nil)
	if err != nil && !gone {
		return fmt.Errorf("flash-sale: read final stock: %w", err)
	}
	orders, err := c.LLen(ctx, ls.stock.Orders).Result()
	if err != nil {
		return fmt.Errorf("flash-sale: count orders: %w", err)
	}
	stale, err := c.Get(ctx, ls.stock.Stale).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("flash-sale: read stale count: %w", err)
	}
	ttl, err := ls.lockTTL(ctx)
	if err != nil {
		return err
	}
	ls.final = &oracle.Final{
		Stock: stock, StockGone: gone, Orders: orders, StaleRejected: stale, LockTTL: ttl,
		Horizon: ls.Retry.Timeout, RenewalsAfterRelease: ls.renewalsAfterRelease(),
	}
	ls.final.Errors, _ = ls.t.errors()
	if ls.witnessed() {
		if ls.final.Witness, err = readWitness(ctx, c, ls.Prefix); err != nil {
			ls.final = nil
			return err
		}
	}
	if ls.Shard.Sharded() {
		// Their multiset is what a merge checks: the orders are at most the stock and
		// whatever was oversold, so the list is small.
		if ls.final.OrderIDs, err = c.LRange(ctx, ls.stock.Orders, 0, -1).Result(); err != nil {
			ls.final = nil
			return fmt.Errorf("flash-sale: read orders: %w", err)
		}
	}
	return nil
}

// renewalsAfterRelease sums what the released leases renewed after their release. A
// watchdog renews every third of the TTL, so a leaked one has shown itself after half.
func (ls *lockSale) renewalsAfterRelease() int {
	ls.renewersMu.Lock()
	defer ls.renewersMu.Unlock()
	if len(ls.renewers) > 0 {
		time.Sleep(ls.TTL / 2)
	}
	n := 0
	for _, r := range ls.renewers {
		_, after := r.Renewals()
		n += after
	}
	return n
}

// lockTTL is the longest time any lock server still holds the lock: zero when none does,
// negative when one holds it for good.
func (ls *lockSale) lockTTL(ctx context.Context) (time.Duration, error) {
	if ls.apps[0].locker == nil {
		return 0, nil
	}
	var longest time.Duration
	for _, c := range ls.r.LockAdmins {
		d, err := c.PTTL(ctx, ls.lockKey).Result()
		if err != nil {
			return 0, fmt.Errorf("flash-sale: read lock ttl: %w", err)
		}
		switch {
		case d == -1: // no expiry: stuck for good
			return -1, nil
		case d > longest:
			longest = d
		}
	}
	return longest, nil
}

// conclude runs the oracles over the ledger and the final state, and fills run.
func (ls *lockSale) conclude(run *results.Run, unfired []string) {
	r := oracle.Check(ls.ledger, ls.final)
	v := r.Outcome()
	if ls.CheckLinearizable {
		lin := oracle.CheckLinearizable(ls.ledger, 10*time.Second)
		run.Linearizability = &lin
		if lin.Verdict == oracle.NotLinearizable {
			v.Findings = append(v.Findings, "NOT-LINEARIZABLE")
		}
	}
	ls.judge(run, r, v, unfired)
	fromLedger(run, r, ls.ledger.Started())
}

// judge fills run with what the oracles found (r, concluded as v), the sale's settings,
// its verdict against what the design documents, and its figures.
func (ls *lockSale) judge(run *results.Run, r oracle.Report, v oracle.Verdict, unfired []string) {
	run.Kind, run.Impl, run.Oracle = results.LockSale, ls.impl.Name, r
	run.Params = results.Params{
		Buyers: ls.Buyers, Stock: ls.Stock, Critical: string(ls.Critical), Think: ls.Think.String(),
		TTL: ls.TTL.String(), RetryInterval: ls.Retry.Interval.String(), RetryTimeout: ls.Retry.Timeout.String(), RetryJitter: ls.Retry.Jitter,
		Conns: ls.Conns, Apps: ls.Apps, Serve: ls.Serve, Pool: ls.pool, Seed: ls.Seed, Faults: ls.Faults.String(), Rate: ls.Rate, RampTo: ls.RampTo,
	}
	if ls.Warmup > 0 {
		run.Params.Warmup = ls.Warmup.String()
	}
	if ls.apps[0].purchaser != nil {
		run.Params.Critical, run.Params.Think = "lua-script", "-"
	}
	documented := ls.impl.Documented
	if d, ok := ls.apps[0].starter.(lockimpl.Documenter); ok {
		documented = d.Documented()
	}
	if ls.Drop.On() {
		// A drop is judged by what the design documents as a scheduler lock, which only
		// the built-in designs say; an adapter's hello speaks of its buyers.
		documented = ls.impl.DropDocumented
	}
	plan := ls.Faults
	if len(plan) == 0 && ls.outlasts() {
		// Holders whose own work outlasts the TTL are what slow-work makes of them: the
		// design's claim with no fault assumes quick holders.
		plan = faults.Plan{{Kind: faults.SlowWork}}
	}
	want, _ := documented.For(plan)
	run.Judge(v, unfired, want)
	run.Undocumented = !documented.Documented()
	run.Log = ls.log
	if ls.apps[0].locker != nil {
		lost := ls.holds.count()
		run.LostLocks = &lost
	}
	run.Latency = ls.t.latencies(results.Acquire, results.Critical, results.Release, results.Purchase)
}

// fromLedger fills in run what is read off a flash sale's ledger entries and its oracles'
// report: sales/s, the sales over time and the tries per buyer.
func fromLedger(run *results.Run, r oracle.Report, entries []oracle.Entry) {
	if r.LastSale > 0 {
		run.SalesPerSec = float64(r.Bought) / r.LastSale.Seconds()
	}
	var sold []time.Duration
	var tries results.TryCounts
	for i := range entries {
		e := &entries[i]
		if e.Outcome == oracle.Bought {
			sold = append(sold, e.Done)
		}
		tries.Add(e.Tries)
	}
	run.Sales, run.Tries = results.Timeline(sold), tries.Tries()
}
