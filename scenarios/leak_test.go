package scenarios

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
)

// leakyWatchdog is a watchdog with the bug the renewal oracle exists for: its release
// deletes the lock but never stops the renewals.
type leakyWatchdog struct{ lockimpl.Token }

type leakyLease struct {
	lockimpl.Lease
	released         atomic.Bool
	total, afterward atomic.Int64
}

func (w leakyWatchdog) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	lease, err := w.Token.TryLock(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	l := &leakyLease{Lease: lease}
	go func() {
		for range 3 {
			time.Sleep(ttl / 3)
			l.total.Add(1)
			if l.released.Load() {
				l.afterward.Add(1)
			}
		}
	}()
	return l, nil
}

func (l *leakyLease) Release(ctx context.Context) error {
	l.released.Store(true)
	return l.Lease.Release(ctx)
}

func (l *leakyLease) Renewals() (int, int) { return int(l.total.Load()), int(l.afterward.Load()) }

// TestRenewalOracle: a watchdog that keeps renewing after its release is reported.
func TestRenewalOracle(t *testing.T) {
	impl := lockimpl.Impl{Name: "leaky-watchdog", NewLocker: func(e lockimpl.Env) lockimpl.Locker {
		return leakyWatchdog{lockimpl.Token{Client: e.Locks[0]}}
	}}
	c := redistest.Shared(t).Client(8)
	defer c.Close()
	s := FlashSale{Sale: Sale{Name: "leak", Buyers: 5, Stock: 5, Prefix: "{test:leak}"}, TTL: 300 * time.Millisecond}
	r, err := s.Run(context.Background(), Single(c), impl)
	if err != nil {
		t.Fatal(err)
	}
	if r.Oracle.RenewalsAfterRelease == 0 || !slices.Contains(r.Verdict.Findings, fmt.Sprintf("RENEWED-AFTER-RELEASE %d", r.Oracle.RenewalsAfterRelease)) {
		t.Errorf("want renewals after release reported, got %d, findings %q", r.Oracle.RenewalsAfterRelease, r.Verdict.Findings)
	}
}
