package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
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

// executed runs a try for the lock on the sale's executor.
type executed struct {
	lockimpl.Locker
	ls *lockSale
}

func (e *executed) TryLock(ctx context.Context, key string, ttl time.Duration) (lease lockimpl.Lease, err error) {
	if xerr := e.ls.x.do(ctx, func() { lease, err = e.Locker.TryLock(ctx, key, ttl) }); xerr != nil {
		return nil, xerr
	}
	return lease, err
}

// buyer is a closed-model buyer's goroutine: it buys once start is closed. It is a
// method rather than a closure for its frame's sake (see buyWithLock).
func (ls *lockSale) buyer(ctx context.Context, i int, start <-chan struct{}, wg *sync.WaitGroup) {
	<-start
	now := time.Now()
	if ls.purchaser == nil && !ls.inj.CrashesAcquiring(i) {
		ls.ledger.Entries[i].Start = now.Sub(ls.t0)
		ls.buyWithLock(ctx, i, now) // directly: buy's frame would be one more on the stack
	} else {
		ls.buy(ctx, i, now)
	}
	wg.Done()
}

// measure records a latency of buyer i, unless it arrived during the warm-up.
func (ls *lockSale) measure(i int, p results.Phase, d time.Duration) {
	ls.t.measure(i, ls.ledger.Entries[i].Start, p, d)
}

// soldOut is the buyers' Abandon hook: stop waiting for the lock once the stock is gone.
func (ls *lockSale) soldOut(ctx context.Context) (bool, error) {
	n, err := runOn(ctx, ls.x, func() (int64, error) { return ls.r.Stock.Get(ctx, ls.stock.Key).Int64() })
	if err != nil {
		return false, fmt.Errorf("flash-sale: read stock: %w", err)
	}
	return n <= 0, nil
}

// buy is one buyer's whole purchase; start is when it arrived, or was meant to.
func (ls *lockSale) buy(ctx context.Context, i int, start time.Time) {
	ls.ledger.Entries[i].Start = start.Sub(ls.t0)
	switch {
	case ls.purchaser != nil:
		ls.buyLockFree(ctx, i, start)
	case ls.inj.CrashesAcquiring(i):
		ls.crashAcquiring(ctx, i, start)
	default:
		ls.buyWithLock(ctx, i, start)
	}
}

// tryer is a lock-free design that retries inside its purchase (Watch) and offers one
// try on its own: the sale then runs the retry loop, so that a try holds a connection
// and a sleep between tries does not.
type tryer interface {
	Try(ctx context.Context, s lockimpl.Stock, buyer string, think time.Duration) (int64, error)
}

// buyQueued is a queued buyer's purchase, run by a worker: its own connection, so the
// call runs here rather than on an executor. start is its intended start.
func (ls *lockSale) buyQueued(ctx context.Context, i int, start time.Time) {
	ls.ledger.Entries[i].Start = start.Sub(ls.t0)
	if err := ctx.Err(); err != nil {
		ls.settle(ctx, i, start, 0, err)
		return
	}
	ls.inj.Purchasing(false) // one script: nothing between a read and a write to stretch
	ls.ledger.Entries[i].Tries = 1
	left, err := ls.purchaser.Purchase(ctx, ls.stock, strconv.Itoa(i), ls.Think.Draw(ls.Seed, i))
	ls.settle(ctx, i, start, left, err)
}

// buyLockFree buys through a lock-free design that retries: each try runs on the
// executor, the sleeps between them on the buyer's goroutine.
//
// A slow-work or client-pause victim works that much longer between its read and its
// write on its first try, as a holder would under the lock.
func (ls *lockSale) buyLockFree(ctx context.Context, i int, start time.Time) {
	v := ls.inj.Purchasing(true)
	t := ls.purchaser.(tryer)
	id, think := strconv.Itoa(i), ls.Think.Draw(ls.Seed, i)
	extra := max(time.Until(v.Until), 0)
	var left int64
	tries, err := ls.Retry.Do(ctx, func(ctx context.Context) (err error) {
		d := think + extra
		extra = 0
		left, err = runOn(ctx, ls.x, func() (int64, error) { return t.Try(ctx, ls.stock, id, d) })
		return err
	})
	ls.ledger.Entries[i].Tries = int32(tries)
	ls.settle(ctx, i, start, left, err)
}

// buyWithLock waits for the lock and, once it holds it, buys. It is kept apart from
// what a holder does, and small: a waiting buyer's stack is this frame and the retry
// loop's, and it must stay within the 2 KB a goroutine starts with (see executor).
func (ls *lockSale) buyWithLock(ctx context.Context, i int, start time.Time) {
	var lease lockimpl.Lease
	tries, err := ls.Retry.Do(ctx, func(ctx context.Context) error { // Retry.Acquire, one frame less
		var err error
		lease, err = ls.locker.TryLock(ctx, ls.lockKey, ls.TTL)
		return err
	})
	ls.ledger.Entries[i].Tries = int32(tries)
	if err != nil {
		ls.settle(ctx, i, start, 0, err)
		return
	}
	ls.hold(ctx, i, start, lease)
}

// hold is the holder's part of a purchase: the critical section and the release.
//
//go:noinline
func (ls *lockSale) hold(ctx context.Context, i int, start time.Time, lease lockimpl.Lease) {
	e := &ls.ledger.Entries[i]
	held := time.Now()
	ls.measure(i, results.Acquire, held.Sub(start))
	e.Held, e.Enter = true, held.Sub(ls.t0)

	left, err := ls.critical(ctx, i, strconv.Itoa(i), lease)

	leave := time.Now()
	e.Leave = leave.Sub(ls.t0)
	if errors.Is(err, errCrashed) {
		ls.settle(ctx, i, start, 0, err) // dead: the lock stays where it is
		return
	}
	ls.measure(i, results.Critical, leave.Sub(held))
	ls.release(ctx, i, lease, leave)
	ls.settle(ctx, i, start, left, err)
}

// crashAcquiring is the CrashAcquire victim: it sends the first of a two-command acquire
// when the lock is free and dies; a design that takes the lock in one command is taken
// whole and left.
func (ls *lockSale) crashAcquiring(ctx context.Context, i int, start time.Time) {
	var err error
	if ls.half != nil {
		half := lockimpl.Retry{Interval: ls.Retry.Interval, Timeout: ls.Retry.Timeout}
		_, err = half.Do(ctx, func(ctx context.Context) error {
			ok, err := runOn(ctx, ls.x, func() (bool, error) { return ls.half.HalfLock(ctx, ls.lockKey, ls.TTL) })
			if err == nil && !ok {
				err = lockimpl.ErrNotAcquired
			}
			return err
		})
	} else {
		var lease lockimpl.Lease
		lease, _, err = ls.Retry.Acquire(ctx, ls.locker, ls.lockKey, ls.TTL)
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
// it. A lock found lost is not an error of the run; the oracles judge it.
func (ls *lockSale) release(ctx context.Context, i int, lease lockimpl.Lease, leave time.Time) {
	bg := context.WithoutCancel(ctx)
	if ended(ctx) {
		var cancel context.CancelFunc
		bg, cancel = context.WithTimeout(bg, time.Second)
		defer cancel()
	}
	var err error
	ls.x.do(bg, func() { err = lease.Release(bg) })
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
	}
}

// errCrashed ends a buyer that a fault killed.
var errCrashed = errors.New("flash-sale: crashed by a fault")

// critical is the lock holder's work: read the stock, let the faults have their way with
// the holder, think, write.
func (ls *lockSale) critical(ctx context.Context, i int, id string, lease lockimpl.Lease) (int64, error) {
	if ls.Critical == Atomic {
		// The faults strike a holder as it is about to write: lock or no lock, one
		// script cannot be overwritten by a late one.
		if v := ls.inj.Held(); v != (faults.Victim{}) {
			if err := ls.suffer(ctx, lease, v); err != nil {
				return 0, err
			}
		}
		return runOn(ctx, ls.x, func() (int64, error) { return ls.script.Purchase(ctx, ls.stock, id, 0) })
	}
	fenced, isFenced := lease.(lockimpl.Fenced)
	var n int64
	var err error
	if isFenced {
		n, err = runOn(ctx, ls.x, func() (int64, error) { return lockimpl.FencedRead(ctx, ls.r.Stock, ls.stock, fenced.Token()) })
	} else {
		n, err = runOn(ctx, ls.x, func() (int64, error) { return ls.r.Stock.Get(ctx, ls.stock.Key).Int64() })
	}
	if err != nil {
		return 0, fmt.Errorf("flash-sale: read stock: %w", err)
	}
	if v := ls.inj.Held(); v != (faults.Victim{}) {
		if err := ls.suffer(ctx, lease, v); err != nil {
			return 0, err
		}
	}
	if n <= 0 {
		return n, lockimpl.ErrSoldOut
	}
	if err := wait.Sleep(ctx, ls.Think.Draw(ls.Seed, i)); err != nil {
		return 0, err
	}
	if isFenced {
		if xerr := ls.x.do(ctx, func() { err = lockimpl.FencedWrite(ctx, ls.r.Stock, ls.stock, fenced.Token(), n-1, id) }); xerr != nil {
			err = xerr
		}
	} else {
		_, err = runOn(ctx, ls.x, func() ([]redis.Cmder, error) {
			pipe := ls.r.Stock.Pipeline()
			pipe.Set(ctx, ls.stock.Key, n-1, redis.KeepTTL) // a key lease, if any, stays
			pipe.RPush(ctx, ls.stock.Orders, id)
			return pipe.Exec(ctx)
		})
	}
	if err != nil {
		return 0, fmt.Errorf("flash-sale: write stock: %w", err)
	}
	return n - 1, nil
}

// suffer carries out what a fault makes of a holder.
func (ls *lockSale) suffer(ctx context.Context, lease lockimpl.Lease, v faults.Victim) error {
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
	case errors.Is(err, errCrashed):
		e.Outcome = oracle.Crashed
	case ended(ctx):
		e.Outcome = oracle.Interrupted
	default:
		e.Outcome = oracle.Failed
		ls.t.failed(err)
	}
}
