package scenarios

import (
	"context"
	"sync"
	"time"

	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
)

// hold is the account a holder keeps of where its time under the lock went, so that a
// lock it lost can be put down to a cause: waiting for a pooled connection, working, or
// being paused.
type hold struct {
	a      *app
	waited time.Duration // for a connection of the instance's pool
	work   time.Duration // thinking, and working slowly under a fault
	paused time.Duration // stopped by a fault, the process and its renewals with it
	died   time.Time     // when a fault killed it, if one did
	// read and wrote are when its stock read and write were answered, if they were.
	read, wrote time.Time
	// asked and told are when its lock library was asked "still held?" right before the
	// write, and answered, if it was asked; toldNo, that the answer was no.
	asked, told time.Time
	toldNo      bool
}

// offset is t on the ledger's clock that starts at t0; zero for a moment that never came.
func offset(t, t0 time.Time) time.Duration {
	if t.IsZero() {
		return 0
	}
	return t.Sub(t0)
}

// onHold runs a holder's call on its instance's executor and counts the wait for a
// connection.
func onHold[T any](ctx context.Context, h *hold, fn func() (T, error)) (T, error) {
	var v T
	var err error
	waited, xerr := h.a.x.timed(ctx, func() { v, err = fn() })
	h.waited += waited
	if xerr != nil {
		return v, xerr
	}
	return v, err
}

// holds is the sale's account of the holds that outlived their lock.
type holds struct {
	mu   sync.Mutex
	lost results.LostLocks
}

// classify counts a finished hold of d: lost when the release found the lock gone (a design
// with an owner check says so) or, for a lease that does not renew itself, when the hold
// outlasted the TTL. A lost hold is put down to the largest of the holder's waits.
func (hs *holds) classify(lease lockimpl.Lease, d, ttl time.Duration, notHeld bool, h *hold) {
	_, renews := lease.(lockimpl.Renewer)
	lost := notHeld || (!renews && d > ttl)
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.lost.Holds++
	if !lost {
		return
	}
	hs.lost.Lost++
	switch {
	case h.paused >= h.work && h.paused >= h.waited && h.paused > 0:
		hs.lost.Paused++
	case h.waited >= h.work && h.waited > 0:
		hs.lost.PoolWait++
	case h.work > 0:
		hs.lost.Work++
	default:
		hs.lost.Other++
	}
}

// count is the account so far.
func (hs *holds) count() results.LostLocks {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.lost
}
