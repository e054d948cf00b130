package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// The purchase of a flash-sale buyer: the protocol each kind of design imposes (wait for
// the lock, hold it, release it; or buy in one call, or try optimistically), the faults
// a buyer suffers on the way, and the ledger entry it writes.

// persistent treats a failed try for the lock as a lock held by someone else: try again
// after the interval, as a client that expects its server to come back would.
type persistent struct {
	lockimpl.Locker
	ls *lockSale
}

func (p persistent) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	lease, err := p.Locker.TryLock(ctx, key, ttl)
	if err != nil && !errors.Is(err, lockimpl.ErrNotAcquired) && !errors.Is(err, lockimpl.ErrBroken) && !ended(ctx) {
		p.ls.t.failed(err)
		return nil, lockimpl.ErrNotAcquired
	}
	return lease, err
}

// executed runs a try for the lock on an application's executor, for a buyer with a
// goroutine of its own.
type executed struct {
	lockimpl.Locker
	a *app
}

func (e *executed) TryLock(ctx context.Context, key string, ttl time.Duration) (lease lockimpl.Lease, err error) {
	if xerr := e.a.x.do(ctx, func() { lease, err = e.Locker.TryLock(ctx, key, ttl) }); xerr != nil {
		return nil, xerr
	}
	return lease, err
}

// measure records a latency of buyer i, unless it arrived during the warm-up.
func (ls *lockSale) measure(i int, p results.Phase, d time.Duration) {
	ls.t.measure(i, ls.ledger.Entries[i].Start, p, d)
}

// soldOut tells a waiting buyer to stop waiting for the lock once the stock is gone. It
// runs on the executor, as the buyer's try did.
func (ls *lockSale) soldOut(ctx context.Context, a *app) (bool, error) {
	n, err := a.r.Stock.Get(ctx, ls.stock.Key).Int64()
	if err != nil {
		return false, fmt.Errorf("flash-sale: read stock: %w", err)
	}
	return n <= 0, nil
}

// arrive starts buyer i, due at due: its first turn to try is queued at its application
// instance. The one buyer a fault kills halfway through taking the lock gets a goroutine
// of its own instead.
func (ls *lockSale) arrive(ctx context.Context, i int, due time.Time) {
	ls.ledger.Entries[i].Start = due.Sub(ls.t0)
	ls.buying.Add(1)
	a := ls.app(i)
	if a.purchaser == nil && ls.inj.CrashesAcquiring(ls.id(i)) {
		ls.owned[i] = true
		go func() {
			defer ls.buying.Done()
			ls.crashAcquiring(ctx, a, i, due)
		}()
		return
	}
	if ls.Serve > 0 {
		ls.giveUp[i] = due.Sub(ls.t0) + ls.Retry.Limit() // patience counts from the arrival
		if !a.door.enter(i, ls.Serve) {
			return // queued at the instance
		}
	}
	a.x.wake(i)
}

// tryer is a lock-free design that retries inside its purchase (Watch) and offers one
// try on its own: the sale then runs the retry loop, so that a try holds a connection
// and a sleep between tries does not.
type tryer interface {
	Try(ctx context.Context, s lockimpl.Stock, buyer string, think time.Duration) (int64, error)
}

// turn is buyer i's try, on a goroutine of a's executor: for the lock, or for a lock-free
// design that retries, to buy. It is the classic loop of lockimpl.Retry.Do taken apart:
// a buyer that did not get the lock asks whether any stock is left (check, queued as a
// call of its own would be), and sleeps among the waiters until its next try, or gives up
// once its timeout has passed since its first; one that got it becomes a holder, with a
// goroutine of its own.
//
// A slow-work or client-pause victim of a lock-free design works that much longer between
// its read and its write on its first try, as a holder would under the lock.
func (ls *lockSale) turn(a *app, i int) {
	if ls.over.Load() {
		ls.drop(i)
		return
	}
	ctx, e := ls.ctx, &ls.ledger.Entries[i]
	start := ls.t0.Add(e.Start)
	if err := ctx.Err(); err != nil {
		ls.done(ctx, i, start, 0, err)
		return
	}
	first := e.Tries == 0
	if first && ls.Serve == 0 {
		ls.giveUp[i] = time.Since(ls.t0) + ls.Retry.Limit()
	}
	e.Tries++
	var lease lockimpl.Lease
	var left int64
	var err error
	var sent time.Time
	if a.purchaser != nil {
		think := ls.Think.Draw(ls.Seed, ls.id(i))
		if first {
			think += max(time.Until(ls.inj.Purchasing(true).Until), 0)
		}
		left, err = a.purchaser.(tryer).Try(ctx, ls.stock, strconv.Itoa(ls.id(i)), think)
	} else {
		sent = time.Now()
		lease, err = a.locker.TryLock(ctx, ls.lockKey, ls.TTL)
	}
	switch {
	case err == nil && lease != nil:
		ls.owned[i] = true
		go ls.holder(ctx, a, i, start, sent, lease)
		return
	case !errors.Is(err, lockimpl.ErrNotAcquired):
		ls.done(ctx, i, start, left, err)
		return
	}
	a.x.recheck(i)
}

// check is buyer i's look at the stock after a failed try, its own turn on the executor:
// it leaves once the stock is gone or its patience has run out, and otherwise sleeps
// among the waiters until its next try.
func (ls *lockSale) check(a *app, i int) {
	if ls.over.Load() {
		ls.drop(i)
		return
	}
	ctx, e := ls.ctx, &ls.ledger.Entries[i]
	start := ls.t0.Add(e.Start)
	if stop, err := ls.soldOut(ctx, a); err != nil || stop {
		ls.done(ctx, i, start, 0, cmp.Or(err, lockimpl.ErrAbandoned))
		return
	}
	now := time.Since(ls.t0)
	patience := ls.giveUp[i] - now
	if patience <= 0 {
		ls.done(ctx, i, start, 0, lockimpl.ErrNotAcquired)
		return
	}
	a.w.sleep(i, now+min(patience, ls.Retry.Backoff()))
}

// drop settles waiting buyer i as cut off by the sale's end: settle's work, less what
// a buyer who never got the lock does not need (its latency, a clock read of its own).
func (ls *lockSale) drop(i int) {
	e := &ls.ledger.Entries[i]
	e.Outcome, e.Done = oracle.Interrupted, time.Duration(ls.overAt.Load())
	ls.leave(ls.ctx, i)
}

// done settles buyer i, who is then no longer buying, and lets the next one in.
func (ls *lockSale) done(ctx context.Context, i int, start time.Time, left int64, err error) {
	ls.settle(ctx, i, start, left, err)
	ls.leave(ctx, i)
}

// leave is buyer i leaving its instance: the next buyer in the instance's queue takes
// its place; those whose patience ran out while queued give up, never having reached
// Redis.
func (ls *lockSale) leave(ctx context.Context, i int) {
	ls.buying.Done()
	if ls.Serve == 0 {
		return
	}
	a := ls.app(i)
	for {
		next, ok := a.door.next()
		if !ok {
			return
		}
		if ctx.Err() == nil && time.Since(ls.t0) < ls.giveUp[next] {
			a.x.wake(next)
			return
		}
		start := ls.t0.Add(ls.ledger.Entries[next].Start)
		err := ctx.Err()
		if err == nil {
			err = lockimpl.ErrNotAcquired
		}
		ls.settle(ctx, next, start, 0, err)
		ls.buying.Done()
	}
}

// buyQueued is a queued buyer's purchase, run by a worker of application a: its own
// connection, so the call runs here rather than on an executor. start is its intended
// start.
func (ls *lockSale) buyQueued(ctx context.Context, a *app, i int, start time.Time) {
	ls.ledger.Entries[i].Start = start.Sub(ls.t0)
	if err := ctx.Err(); err != nil {
		ls.settle(ctx, i, start, 0, err)
		return
	}
	if ls.spike != nil {
		wait.Sleep(ctx, ls.spike())
	}
	ls.inj.Purchasing(false) // one script: nothing between a read and a write to stretch
	ls.ledger.Entries[i].Tries = 1
	left, err := a.purchaser.Purchase(ctx, ls.stock, strconv.Itoa(ls.id(i)), ls.Think.Draw(ls.Seed, ls.id(i)))
	ls.settle(ctx, i, start, left, err)
}

// holder is buyer i from the moment it got the lock, with the acquire sent at sent: the
// critical section and the release.
func (ls *lockSale) holder(ctx context.Context, a *app, i int, start, sent time.Time, lease lockimpl.Lease) {
	defer ls.leave(ctx, i)
	e := &ls.ledger.Entries[i]
	held := time.Now()
	ls.measure(i, results.Acquire, held.Sub(start))
	e.Held, e.Enter = true, held.Sub(ls.t0)

	h := &hold{a: a}
	in := ls.witnessIn(ctx, a)
	ls.t.entered()
	left, err := ls.critical(ctx, h, i, strconv.Itoa(ls.id(i)), lease)
	ls.t.left(errors.Is(err, errCrashed))
	ls.witnessOut(ctx, a, in)

	leave := time.Now()
	e.Leave = leave.Sub(ls.t0)
	rec := oracle.Hold{Buyer: ls.id(i), Sent: sent.Sub(ls.t0), Enter: e.Enter, Read: offset(h.read, ls.t0),
		Wrote: offset(h.wrote, ls.t0), Leave: e.Leave, Lease: promised(sent, ls.TTL, lease).Sub(ls.t0),
		Asked: offset(h.asked, ls.t0), Told: offset(h.told, ls.t0), ToldNo: h.toldNo}
	if errors.Is(err, errCrashed) {
		// Dead: the lock stays where it is, and the hold ended when the holder died, not
		// when its process (an adapter's) had been replaced, which may take longer than a TTL.
		e.Leave = h.died.Sub(ls.t0)
		rec.Leave, rec.Died = e.Leave, true
		ls.record(rec)
		ls.settle(ctx, i, start, 0, err)
		return
	}
	ls.measure(i, results.Critical, leave.Sub(held))
	lost, ok := ls.release(ctx, h, i, lease, leave)
	if ok {
		rec.Released, rec.Expired = time.Since(ls.t0), lost
	}
	ls.record(rec)
	ls.holds.classify(lease, leave.Sub(held), ls.TTL, lost, h)
	ls.settle(ctx, i, start, left, err)
}

// promised is when lease's lock was surely still held by Redis's promise: the acquire's
// send plus the TTL, later when a renewal Redis confirmed was sent later.
func promised(sent time.Time, ttl time.Duration, lease lockimpl.Lease) time.Time {
	until := sent.Add(ttl)
	if x, ok := lease.(lockimpl.Extender); ok {
		if u := x.PromisedUntil(); u.After(until) {
			until = u
		}
	}
	return until
}

// record keeps a hold's detail in the ledger.
func (ls *lockSale) record(h oracle.Hold) {
	ls.holdsMu.Lock()
	ls.ledger.Holds = append(ls.ledger.Holds, h)
	ls.holdsMu.Unlock()
}

// crashAcquiring is the CrashAcquire victim: it sends the first of a two-command acquire
// when the lock is free and dies; a design that takes the lock in one command is taken
// whole and left.
func (ls *lockSale) crashAcquiring(ctx context.Context, a *app, i int, start time.Time) {
	var err error
	if a.half != nil {
		half := lockimpl.Retry{Interval: ls.Retry.Interval, Timeout: ls.Retry.Timeout}
		_, err = half.Do(ctx, func(ctx context.Context) error {
			ok, err := runOn(ctx, a.x, func() (bool, error) { return a.half.HalfLock(ctx, ls.lockKey, ls.TTL) })
			if err == nil && !ok {
				err = lockimpl.ErrNotAcquired
			}
			return err
		})
	} else {
		r := ls.Retry
		r.Abandon = func(ctx context.Context) (bool, error) {
			return runOn(ctx, a.x, func() (bool, error) { return ls.soldOut(ctx, a) })
		}
		var lease lockimpl.Lease
		lease, _, err = r.Acquire(ctx, a.executed, ls.lockKey, ls.TTL)
		if f, ok := lease.(lockimpl.Freezer); ok {
			f.Freeze(time.Time{})
		}
	}
	if err == nil {
		err = errCrashed
	}
	ls.settle(ctx, i, start, 0, err)
}

// release gives the lock back, even when the run is being stopped: a lock left behind
// would outlive it. A stopped run gives it a second, for its server may be what stopped
// it. A lock found lost is not an error of the run; the oracles judge it, and release
// reports it.
func (ls *lockSale) release(ctx context.Context, h *hold, i int, lease lockimpl.Lease, leave time.Time) (lost, answered bool) {
	bg := context.WithoutCancel(ctx)
	if ended(ctx) {
		var cancel context.CancelFunc
		bg, cancel = context.WithTimeout(bg, time.Second)
		defer cancel()
	}
	var err error
	h.a.x.do(bg, func() { err = lease.Release(bg) })
	if r, ok := lease.(lockimpl.Renewer); ok {
		ls.renewersMu.Lock()
		ls.renewers = append(ls.renewers, r)
		ls.renewersMu.Unlock()
	}
	switch {
	case err == nil, errors.Is(err, lockimpl.ErrNotHeld):
		ls.measure(i, results.Release, time.Since(leave))
	default:
		ls.t.failed(err)
		return false, false
	}
	return errors.Is(err, lockimpl.ErrNotHeld), true
}

// errCrashed ends a buyer that a fault killed.
var errCrashed = errors.New("flash-sale: crashed by a fault")

// critical is the lock holder's work: read the stock, let the faults have their way with
// the holder, think, write. h keeps the account of where the time went.
func (ls *lockSale) critical(ctx context.Context, h *hold, i int, id string, lease lockimpl.Lease) (int64, error) {
	a := h.a
	if ls.Critical == Atomic {
		// The faults strike a holder as it is about to write: lock or no lock, one
		// script cannot be overwritten by a late one.
		if v := ls.inj.Held(ls.id(i), ls.appOf(i)); v != (faults.Victim{}) {
			if err := ls.suffer(ctx, h, ls.id(i), lease, v); err != nil {
				return 0, err
			}
		}
		if err := ls.ask(ctx, h, lease); err != nil {
			return 0, err
		}
		n, err := onHold(ctx, h, func() (int64, error) { return a.script.Purchase(ctx, ls.stock, id, 0) })
		h.wrote = time.Now()
		return n, err
	}
	fenced, isFenced := lease.(lockimpl.Fenced)
	var n int64
	var err error
	if isFenced {
		n, err = onHold(ctx, h, func() (int64, error) { return lockimpl.FencedRead(ctx, a.r.Stock, ls.stock, fenced.Token()) })
	} else {
		n, err = onHold(ctx, h, func() (int64, error) { return a.r.Stock.Get(ctx, ls.stock.Key).Int64() })
	}
	if err != nil {
		return 0, fmt.Errorf("flash-sale: read stock: %w", err)
	}
	h.read = time.Now()
	if v := ls.inj.Held(ls.id(i), ls.appOf(i)); v != (faults.Victim{}) {
		if err := ls.suffer(ctx, h, ls.id(i), lease, v); err != nil {
			return 0, err
		}
	}
	if n <= 0 {
		return n, lockimpl.ErrSoldOut
	}
	think := ls.Think.Draw(ls.Seed, ls.id(i))
	h.work += think
	if err := wait.Sleep(ctx, think); err != nil {
		return 0, err
	}
	if err := ls.ask(ctx, h, lease); err != nil {
		return 0, err
	}
	if isFenced {
		_, err = onHold(ctx, h, func() (struct{}, error) {
			return struct{}{}, lockimpl.FencedWrite(ctx, a.r.Stock, ls.stock, fenced.Token(), n-1, id)
		})
	} else {
		_, err = onHold(ctx, h, func() ([]redis.Cmder, error) {
			pipe := a.r.Stock.Pipeline()
			pipe.Set(ctx, ls.stock.Key, n-1, redis.KeepTTL) // a key lease, if any, stays
			pipe.RPush(ctx, ls.stock.Orders, id)
			return pipe.Exec(ctx)
		})
	}
	if err != nil {
		return 0, fmt.Errorf("flash-sale: write stock: %w", err)
	}
	h.wrote = time.Now()
	return n - 1, nil
}

// errToldNotHeld ends a holder whose lock library said it no longer held the lock.
var errToldNotHeld = errors.New("flash-sale: the lock library said the lock is no longer held")

// ask is the holder's question to its lock library right before the write, as the
// library's docs say to ask it: a "no", or an error in place of a "yes", and it does not
// write. A library that cannot tell leaves the holder to write as it would.
func (ls *lockSale) ask(ctx context.Context, h *hold, lease lockimpl.Lease) error {
	t, ok := lease.(lockimpl.Teller)
	if !ok {
		return nil
	}
	asked := time.Now()
	held, err := t.StillHeld(ctx)
	if errors.Is(err, lockimpl.ErrCannotTell) {
		return nil
	}
	h.asked, h.told, h.toldNo = asked, time.Now(), !held || err != nil
	if h.toldNo {
		return errToldNotHeld
	}
	return nil
}

// suffer carries out what a fault makes of a holder.
func (ls *lockSale) suffer(ctx context.Context, h *hold, id int, lease lockimpl.Lease, v faults.Victim) error {
	f, canFreeze := lease.(lockimpl.Freezer)
	if a, ok := lease.(lockimpl.AppPauser); ok && !v.AppPauseUntil.IsZero() {
		n := a.PauseApp(v.AppPauseUntil)
		ls.inj.Strike(faults.AppPause, fmt.Sprintf("application instance of holder (buyer %d): its %d processes stopped for %s",
			id, n, time.Until(v.AppPauseUntil).Round(10*time.Millisecond)))
		v = v.AppPaused()
	}
	if v.Crash {
		h.died = time.Now()
		if canFreeze {
			f.Freeze(time.Time{})
		}
		return errCrashed
	}
	if canFreeze && !v.FreezeUntil.IsZero() {
		f.Freeze(v.FreezeUntil)
	}
	if s, ok := lease.(lockimpl.Starver); ok && !v.StarveUntil.IsZero() {
		s.Starve(v.StarveUntil, faults.StarveRun, faults.StarvePeriod)
	}
	if t, ok := lease.(lockimpl.Terminator); ok && v.Term {
		ls.inj.Strike(faults.TermHolder, fmt.Sprintf("holder (buyer %d) sent SIGTERM, SIGKILL %s later", id, v.Grace))
		select {
		case <-t.Terminate(v.Grace):
			h.died = time.Now() // it stopped at once: its request died with it
			return errCrashed
		case <-time.After(faults.TermNotice): // it handles SIGTERM: the request goes on
		}
	}
	began := time.Now()
	err := v.Wait(ctx)
	if v.FreezeUntil.IsZero() {
		h.work += time.Since(began)
	} else {
		h.paused += time.Since(began)
	}
	return err
}

// settle writes the buyer's outcome.
func (ls *lockSale) settle(ctx context.Context, i int, start time.Time, left int64, err error) {
	ls.t.finished(err == nil)
	e := &ls.ledger.Entries[i]
	now := time.Now()
	e.Done = now.Sub(ls.t0)
	switch {
	case err == nil:
		e.Outcome, e.Left = oracle.Bought, left
		ls.measure(i, results.Purchase, now.Sub(start))
	case errors.Is(err, lockimpl.ErrSoldOut), errors.Is(err, lockimpl.ErrAbandoned):
		e.Outcome = oracle.SoldOut
	case errors.Is(err, lockimpl.ErrNotAcquired):
		e.Outcome = oracle.GaveUp
	case errors.Is(err, lockimpl.ErrStale):
		e.Outcome = oracle.Rejected
	case errors.Is(err, errToldNotHeld):
		e.Outcome = oracle.Withdrew
	case errors.Is(err, errCrashed):
		e.Outcome = oracle.Crashed
	case ended(ctx):
		e.Outcome = oracle.Interrupted
	default:
		e.Outcome = oracle.Failed
		ls.t.failed(err)
	}
}
