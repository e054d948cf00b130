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

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// sale is a running FlashSale: what every buyer reads, and the ledger and recorder they
// write. Buyer i writes only ledger entry i.
type sale struct {
	FlashSale
	r         Redis
	locker    lockimpl.Locker
	half      lockimpl.HalfLocker // nil unless the design takes two commands
	purchaser lockimpl.Purchaser
	script    lockimpl.Purchaser // the Atomic critical section
	inj       *faults.Injector
	stock     lockimpl.Stock
	lockKey   string
	ledger    *oracle.Ledger
	rec       *results.Recorder
	x         *executor // runs every buyer's Redis calls; see executor
	t0        time.Time

	// tolerant is set when faults act on servers or the network: errors are then the
	// fault's doing, and buyers carry on as a robust client would instead of ending the run.
	tolerant   bool
	failures   atomic.Int64
	sold, done atomic.Int64 // for Progress
	renewersMu sync.Mutex
	renewers   []lockimpl.Renewer // read at the end: a leaked renewal comes late
	errOnce    sync.Once
	firstErr   error
}

func newSale(s FlashSale, r Redis, impl lockimpl.Impl, inj *faults.Injector) *sale {
	sl := &sale{
		FlashSale: s, r: r, inj: inj,
		script: lockimpl.Lua{Client: r.Stock},
		ledger: oracle.NewLedger(s.Buyers, s.Stock),
		rec:    results.NewRecorder(4 * runtime.GOMAXPROCS(0)),
	}
	sl.stock, sl.lockKey = s.keys()
	if impl.Retry != nil {
		sl.Retry = impl.Retry(sl.Retry)
	}
	sl.Retry.Abandon = sl.soldOut
	needs := s.Faults.Needs()
	sl.tolerant = needs.Owned || needs.Proxy
	env := lockimpl.Env{Locks: r.Locks[:impl.LockNodes()], Stock: r.Stock, Retry: sl.Retry}
	if impl.NewPurchaser != nil {
		sl.purchaser = impl.NewPurchaser(env)
	} else {
		sl.locker = impl.NewLocker(env)
		sl.half, _ = sl.locker.(lockimpl.HalfLocker)
		sl.locker = &executed{sl.locker, sl}
		if sl.tolerant {
			sl.locker = persistent{sl.locker, sl}
		}
	}
	return sl
}

// persistent treats a failed try for the lock as a lock held by someone else: try again
// after the interval, as a client that expects its server to come back would.
type persistent struct {
	lockimpl.Locker
	sl *sale
}

func (p persistent) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	lease, err := p.Locker.TryLock(ctx, key, ttl)
	if err != nil && !errors.Is(err, lockimpl.ErrNotAcquired) && !ended(ctx) {
		p.sl.failed(err)
		return nil, lockimpl.ErrNotAcquired
	}
	return lease, err
}

// executed runs a try for the lock on the sale's executor.
type executed struct {
	lockimpl.Locker
	sl *sale
}

func (e *executed) TryLock(ctx context.Context, key string, ttl time.Duration) (lease lockimpl.Lease, err error) {
	if xerr := e.sl.x.do(ctx, func() { lease, err = e.Locker.TryLock(ctx, key, ttl) }); xerr != nil {
		return nil, xerr
	}
	return lease, err
}

// run starts every buyer, at once or as they arrive, and waits for all of them. When
// ctx ends before every buyer started, the rest are counted as never started.
func (sl *sale) run(ctx context.Context) {
	if sl.oneCall() {
		sl.runQueued(ctx)
		return
	}
	sl.x = newExecutor(sl.Conns, sl.Buyers)
	defer sl.x.stop()
	var wg sync.WaitGroup
	if sl.Rate > 0 {
		sl.t0 = time.Now()
		defer sl.startReports()()
		sl.arrive(ctx, func(i int, at time.Time) { wg.Go(func() { sl.buy(ctx, i, at) }) })
		wg.Wait()
		return
	}
	start := make(chan struct{})
	for i := range sl.Buyers {
		// Starting a million goroutines takes a second or two: a stop meanwhile is heard.
		if i%4096 == 0 && ctx.Err() != nil {
			sl.interrupt(i)
			break
		}
		wg.Add(1)
		go sl.buyer(ctx, i, start, &wg)
	}
	sl.t0 = time.Now()
	defer sl.startReports()()
	close(start)
	wg.Wait()
}

// interrupt notes that the buyers from the ith on never started.
func (sl *sale) interrupt(from int) { sl.ledger.Unstarted = sl.Buyers - from }

// buyer is a closed-model buyer's goroutine: it buys once start is closed. It is a
// method rather than a closure for its frame's sake (see buyWithLock).
func (sl *sale) buyer(ctx context.Context, i int, start <-chan struct{}, wg *sync.WaitGroup) {
	<-start
	now := time.Now()
	if sl.purchaser == nil && !sl.inj.CrashesAcquiring(i) {
		sl.ledger.Entries[i].Start = now.Sub(sl.t0)
		sl.buyWithLock(ctx, i, now) // directly: buy's frame would be one more on the stack
	} else {
		sl.buy(ctx, i, now)
	}
	wg.Done()
}

// arrive starts each buyer at its arrival time, by calling start with the buyer and
// the time it was due.
func (sl *sale) arrive(ctx context.Context, start func(i int, at time.Time)) {
	started := 0
	arrived := arrive(ctx, sl.Buyers, sl.Rate, sl.RampTo, sl.t0, func(n int) {
		for ; started < n; started++ {
			start(started, sl.t0.Add(arrival(started, sl.Buyers, sl.Rate, sl.RampTo)))
		}
	})
	sl.interrupt(arrived)
}

// measure records a latency of buyer i, unless it arrived during the warm-up.
func (sl *sale) measure(i int, p results.Phase, d time.Duration) {
	if sl.Warmup > 0 && sl.ledger.Entries[i].Start < sl.Warmup {
		return
	}
	sl.rec.Record(i, p, d)
}

// soldOut is the buyers' Abandon hook: stop waiting for the lock once the stock is gone.
func (sl *sale) soldOut(ctx context.Context) (bool, error) {
	n, err := runOn(ctx, sl.x, func() (int64, error) { return sl.r.Stock.Get(ctx, sl.stock.Key).Int64() })
	if err != nil {
		return false, fmt.Errorf("flash-sale: read stock: %w", err)
	}
	return n <= 0, nil
}

// buy is one buyer's whole purchase; start is when it arrived, or was meant to.
func (sl *sale) buy(ctx context.Context, i int, start time.Time) {
	sl.ledger.Entries[i].Start = start.Sub(sl.t0)
	switch {
	case sl.purchaser != nil:
		sl.buyLockFree(ctx, i, start)
	case sl.inj.CrashesAcquiring(i):
		sl.crashAcquiring(ctx, i, start)
	default:
		sl.buyWithLock(ctx, i, start)
	}
}

// tryer is a lock-free design that retries inside its purchase (Watch) and offers one
// try on its own: the sale then runs the retry loop, so that a try holds a connection
// and a sleep between tries does not.
type tryer interface {
	Try(ctx context.Context, s lockimpl.Stock, buyer string, think time.Duration) (int64, error)
}

// oneCall reports whether a purchase is a single call on a connection: a lock-free
// design that does not retry.
func (sl *sale) oneCall() bool {
	_, retries := sl.purchaser.(tryer)
	return sl.purchaser != nil && !retries
}

// runQueued runs a sale whose purchases are one call each. Such a buyer has nothing to
// wait for but a connection, so it needs no goroutine of its own: buyers queue, first
// come first served, and one worker per connection buys for each in turn (see feed).
// That saves the goroutine and two hand-overs per purchase, which is what lets the lua
// sale keep pace with redis-benchmark. Under a closed load every buyer arrives at the
// start.
func (sl *sale) runQueued(ctx context.Context) {
	sl.t0 = time.Now()
	stopReports := sl.startReports()
	defer stopReports()
	feed(ctx, sl.Buyers, sl.Conns, sl.Rate, sl.RampTo, sl.t0,
		func(i int, at time.Time) { sl.buyQueued(ctx, i, at) }, sl.interrupt)
}

// buyQueued is a queued buyer's purchase, run by a worker: its own connection, so the
// call runs here rather than on an executor. start is its intended start.
func (sl *sale) buyQueued(ctx context.Context, i int, start time.Time) {
	sl.ledger.Entries[i].Start = start.Sub(sl.t0)
	if err := ctx.Err(); err != nil {
		sl.settle(ctx, i, start, 0, err)
		return
	}
	sl.inj.Purchasing(ctx, false) // one script: nothing between a read and a write to stretch
	sl.ledger.Entries[i].Tries = 1
	left, err := sl.purchaser.Purchase(ctx, sl.stock, strconv.Itoa(i), sl.Think.Draw(sl.Seed, i))
	sl.settle(ctx, i, start, left, err)
}

// buyLockFree buys through a lock-free design that retries: each try runs on the
// executor, the sleeps between them on the buyer's goroutine.
//
// A slow-work or client-pause victim works that much longer between its read and its
// write on its first try, as a holder would under the lock.
func (sl *sale) buyLockFree(ctx context.Context, i int, start time.Time) {
	v := sl.inj.Purchasing(ctx, true)
	t := sl.purchaser.(tryer)
	id, think := strconv.Itoa(i), sl.Think.Draw(sl.Seed, i)
	extra := max(time.Until(v.Until), 0)
	var left int64
	tries, err := sl.Retry.Do(ctx, func(ctx context.Context) (err error) {
		d := think + extra
		extra = 0
		left, err = runOn(ctx, sl.x, func() (int64, error) { return t.Try(ctx, sl.stock, id, d) })
		return err
	})
	sl.ledger.Entries[i].Tries = int32(tries)
	sl.settle(ctx, i, start, left, err)
}

// buyWithLock waits for the lock and, once it holds it, buys. It is kept apart from
// what a holder does, and small: a waiting buyer's stack is this frame and the retry
// loop's, and it must stay within the 2 KB a goroutine starts with (see executor).
func (sl *sale) buyWithLock(ctx context.Context, i int, start time.Time) {
	var lease lockimpl.Lease
	tries, err := sl.Retry.Do(ctx, func(ctx context.Context) error { // Retry.Acquire, one frame less
		var err error
		lease, err = sl.locker.TryLock(ctx, sl.lockKey, sl.TTL)
		return err
	})
	sl.ledger.Entries[i].Tries = int32(tries)
	if err != nil {
		sl.settle(ctx, i, start, 0, err)
		return
	}
	sl.hold(ctx, i, start, lease)
}

// hold is the holder's part of a purchase: the critical section and the release.
//
//go:noinline
func (sl *sale) hold(ctx context.Context, i int, start time.Time, lease lockimpl.Lease) {
	e := &sl.ledger.Entries[i]
	held := time.Now()
	sl.measure(i, results.Acquire, held.Sub(start))
	e.Held, e.Enter = true, held.Sub(sl.t0)

	left, err := sl.critical(ctx, i, strconv.Itoa(i), lease)

	leave := time.Now()
	e.Leave = leave.Sub(sl.t0)
	if errors.Is(err, errCrashed) {
		sl.settle(ctx, i, start, 0, err) // dead: the lock stays where it is
		return
	}
	sl.measure(i, results.Critical, leave.Sub(held))
	sl.release(ctx, i, lease, leave)
	sl.settle(ctx, i, start, left, err)
}

// crashAcquiring is the CrashAcquire victim: it sends the first of a two-command acquire
// when the lock is free and dies; a design that takes the lock in one command is taken
// whole and left.
func (sl *sale) crashAcquiring(ctx context.Context, i int, start time.Time) {
	var err error
	if sl.half != nil {
		half := lockimpl.Retry{Interval: sl.Retry.Interval, Timeout: sl.Retry.Timeout}
		_, err = half.Do(ctx, func(ctx context.Context) error {
			ok, err := runOn(ctx, sl.x, func() (bool, error) { return sl.half.HalfLock(ctx, sl.lockKey, sl.TTL) })
			if err == nil && !ok {
				err = lockimpl.ErrNotAcquired
			}
			return err
		})
	} else {
		var lease lockimpl.Lease
		lease, _, err = sl.Retry.Acquire(ctx, sl.locker, sl.lockKey, sl.TTL)
		if f, ok := lease.(lockimpl.Freezer); ok {
			f.Freeze(time.Time{})
		}
	}
	if err == nil {
		err = errCrashed
	}
	sl.settle(ctx, i, start, 0, err)
}

// release gives the lock back, even when the run is being stopped: a lock left behind
// would outlive it. A stopped run gives it a second, for its server may be what stopped
// it. A lock found lost is not an error of the run; the oracles judge it.
func (sl *sale) release(ctx context.Context, i int, lease lockimpl.Lease, leave time.Time) {
	bg := context.WithoutCancel(ctx)
	if ended(ctx) {
		var cancel context.CancelFunc
		bg, cancel = context.WithTimeout(bg, time.Second)
		defer cancel()
	}
	var err error
	sl.x.do(bg, func() { err = lease.Release(bg) })
	if r, ok := lease.(lockimpl.Renewer); ok {
		sl.renewersMu.Lock()
		sl.renewers = append(sl.renewers, r)
		sl.renewersMu.Unlock()
	}
	switch {
	case err == nil, errors.Is(err, lockimpl.ErrNotHeld):
		sl.measure(i, results.Release, time.Since(leave))
	default:
		sl.failed(err)
	}
}

// errCrashed ends a buyer that a fault killed.
var errCrashed = errors.New("flash-sale: crashed by a fault")

// critical is the lock holder's work: read the stock, let the faults have their way with
// the holder, think, write.
func (sl *sale) critical(ctx context.Context, i int, id string, lease lockimpl.Lease) (int64, error) {
	if sl.Critical == Atomic {
		// The faults strike a holder as it is about to write: lock or no lock, one
		// script cannot be overwritten by a late one.
		if v := sl.inj.Held(ctx); v != (faults.Victim{}) {
			if err := sl.suffer(ctx, lease, v); err != nil {
				return 0, err
			}
		}
		return runOn(ctx, sl.x, func() (int64, error) { return sl.script.Purchase(ctx, sl.stock, id, 0) })
	}
	fenced, isFenced := lease.(lockimpl.Fenced)
	var n int64
	var err error
	if isFenced {
		n, err = runOn(ctx, sl.x, func() (int64, error) { return lockimpl.FencedRead(ctx, sl.r.Stock, sl.stock, fenced.Token()) })
	} else {
		n, err = runOn(ctx, sl.x, func() (int64, error) { return sl.r.Stock.Get(ctx, sl.stock.Key).Int64() })
	}
	if err != nil {
		return 0, fmt.Errorf("flash-sale: read stock: %w", err)
	}
	if v := sl.inj.Held(ctx); v != (faults.Victim{}) {
		if err := sl.suffer(ctx, lease, v); err != nil {
			return 0, err
		}
	}
	if n <= 0 {
		return n, lockimpl.ErrSoldOut
	}
	if err := sleep(ctx, sl.Think.Draw(sl.Seed, i)); err != nil {
		return 0, err
	}
	if isFenced {
		if xerr := sl.x.do(ctx, func() { err = lockimpl.FencedWrite(ctx, sl.r.Stock, sl.stock, fenced.Token(), n-1, id) }); xerr != nil {
			err = xerr
		}
	} else {
		_, err = runOn(ctx, sl.x, func() ([]redis.Cmder, error) {
			pipe := sl.r.Stock.Pipeline()
			pipe.Set(ctx, sl.stock.Key, n-1, redis.KeepTTL) // a key lease, if any, stays
			pipe.RPush(ctx, sl.stock.Orders, id)
			return pipe.Exec(ctx)
		})
	}
	if err != nil {
		return 0, fmt.Errorf("flash-sale: write stock: %w", err)
	}
	return n - 1, nil
}

// suffer carries out what a fault makes of a holder.
func (sl *sale) suffer(ctx context.Context, lease lockimpl.Lease, v faults.Victim) error {
	f, canFreeze := lease.(lockimpl.Freezer)
	if v.Crash {
		if canFreeze {
			f.Freeze(time.Time{})
		}
		return errCrashed
	}
	if canFreeze && !v.FreezeUntil.IsZero() {
		f.Freeze(v.FreezeUntil)
	}
	return v.Wait(ctx)
}

// settle writes the buyer's outcome.
func (sl *sale) settle(ctx context.Context, i int, start time.Time, left int64, err error) {
	if sl.Progress != nil {
		sl.done.Add(1)
		if err == nil {
			sl.sold.Add(1)
		}
	}
	e := &sl.ledger.Entries[i]
	now := time.Now()
	e.Done = now.Sub(sl.t0)
	switch {
	case err == nil:
		e.Outcome, e.Left = oracle.Bought, left
		sl.measure(i, results.Purchase, now.Sub(start))
	case errors.Is(err, lockimpl.ErrSoldOut), errors.Is(err, lockimpl.ErrAbandoned):
		e.Outcome = oracle.SoldOut
	case errors.Is(err, lockimpl.ErrNotAcquired):
		e.Outcome = oracle.GaveUp
	case errors.Is(err, lockimpl.ErrStale):
		e.Outcome = oracle.Rejected
	case errors.Is(err, errCrashed):
		e.Outcome = oracle.Crashed
	case ended(ctx):
		e.Outcome = oracle.Interrupted
	default:
		e.Outcome = oracle.Failed
		sl.failed(err)
	}
}

// failed counts an error a buyer met. Without faults that act on servers it is kept and
// ends the run: something is wrong with Redis, not with a lock.
func (sl *sale) failed(err error) {
	sl.failures.Add(1)
	sl.errOnce.Do(func() { sl.firstErr = err })
}

// runErr is the error that makes the run incomplete, if any.
func (sl *sale) runErr() error {
	if sl.tolerant {
		return nil
	}
	return sl.firstErr
}

// final reads the outcome from Redis; nil when it cannot.
func (sl *sale) final(ctx context.Context) (*oracle.Final, error) {
	c := sl.r.StockAdmin
	stock, err := c.Get(ctx, sl.stock.Key).Int64()
	if err != nil {
		return nil, fmt.Errorf("flash-sale: read final stock: %w", err)
	}
	orders, err := c.LLen(ctx, sl.stock.Orders).Result()
	if err != nil {
		return nil, fmt.Errorf("flash-sale: count orders: %w", err)
	}
	stale, err := c.Get(ctx, sl.stock.Stale).Int64()
	if err != nil && !errors.Is(err, redisNil) {
		return nil, fmt.Errorf("flash-sale: read stale count: %w", err)
	}
	ttl, err := sl.lockTTL(ctx)
	if err != nil {
		return nil, err
	}
	return &oracle.Final{
		Stock: stock, Orders: orders, StaleRejected: stale, LockTTL: ttl,
		Horizon: sl.Retry.Timeout, RenewalsAfterRelease: sl.renewalsAfterRelease(),
	}, nil
}

// renewalsAfterRelease sums what the released leases renewed after their release. A
// watchdog renews every third of the TTL, so a leaked one has shown itself after half.
func (sl *sale) renewalsAfterRelease() int {
	sl.renewersMu.Lock()
	defer sl.renewersMu.Unlock()
	if len(sl.renewers) > 0 {
		time.Sleep(sl.TTL / 2)
	}
	n := 0
	for _, r := range sl.renewers {
		_, after := r.Renewals()
		n += after
	}
	return n
}

// lockTTL is the longest time any lock server still holds the lock: zero when none does,
// negative when one holds it for good.
func (sl *sale) lockTTL(ctx context.Context) (time.Duration, error) {
	if sl.locker == nil {
		return 0, nil
	}
	var longest time.Duration
	for _, c := range sl.r.LockAdmins {
		d, err := c.PTTL(ctx, sl.lockKey).Result()
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

var redisNil = redis.Nil

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// startReports calls Progress every second, once t0 is set, until the returned func is
// called.
func (sl *sale) startReports() (stop func()) {
	if sl.Progress == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		sl.report(done)
	}()
	return func() { close(done); <-finished }
}

// report calls Progress every second until stop is closed.
func (sl *sale) report(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var lastSold int64
	last := time.Now()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			sold := sl.sold.Load()
			sl.Progress(Progress{Sold: sold, Stock: sl.Stock, Done: int(sl.done.Load()), Buyers: sl.Buyers,
				Elapsed: now.Sub(sl.t0), SalesPerSec: float64(sold-lastSold) / now.Sub(last).Seconds()})
			lastSold, last = sold, now
		}
	}
}
