package mylock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/scenarios/salestest"
)

// adapt makes a Lock a stockbench design.
type adapt struct{ Lock }

type lease func(context.Context) error

func (r lease) Release(ctx context.Context) error { return r(ctx) }

func (a adapt) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	release, err := a.Acquire(ctx, key, ttl)
	if errors.Is(err, ErrTaken) {
		return nil, lockimpl.ErrNotAcquired
	}
	if err != nil {
		return nil, err
	}
	return lease(release), nil
}

// Honest claims: safe while holders live, an oversell when one is paused past its TTL.
func TestLock(t *testing.T) {
	salestest.Lock(t, salestest.LockDesign{
		Impl:   lockimpl.Impl{Name: "mylock", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return adapt{Lock{C: e.Locks[0]}} }},
		Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold},
		Faults: []faults.Kind{faults.ClientPause, faults.CrashHolder},
	})
}

// The same claims for the lock with the units bug: it oversells with no fault at all.
func TestSecondsLock(t *testing.T) {
	salestest.Lock(t, salestest.LockDesign{
		Impl:   lockimpl.Impl{Name: "mylock-seconds", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return adapt{Lock{C: e.Locks[0], Seconds: true}} }},
		Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold},
		Faults: []faults.Kind{faults.ClientPause, faults.CrashHolder},
	})
}

// Claims that admit anything, but documentation the lock does not earn: the honest lock
// is SAFE with no fault, not OVERSOLD as its Impl says. The kit holds it to its word.
func TestDocumentedLock(t *testing.T) {
	salestest.Lock(t, salestest.LockDesign{
		Impl: lockimpl.Impl{Name: "mylock-documented", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return adapt{Lock{C: e.Locks[0]}} },
			Documented: faults.Verdicts{None: []oracle.Class{oracle.ClassOversold}}},
		Claims: salestest.Claims{salestest.NoFault: oracle.ClassOversold, faults.CrashHolder: oracle.ClassOversold},
		Faults: []faults.Kind{faults.CrashHolder},
	})
}
