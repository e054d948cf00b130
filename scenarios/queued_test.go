package scenarios

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// slowPurchaser sells one unit per call after taking d, as a purchase on a busy server
// would; it counts the calls that overlapped.
type slowPurchaser struct {
	d          time.Duration
	left       atomic.Int64
	busy, most atomic.Int64
	sold       func() // when set, called after each unit sold
}

func (p *slowPurchaser) Purchase(ctx context.Context, _ lockimpl.Stock, _ string, _ time.Duration) (int64, error) {
	n := p.busy.Add(1)
	defer p.busy.Add(-1)
	for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
	}
	if err := wait.Sleep(ctx, p.d); err != nil {
		return 0, err
	}
	left := p.left.Add(-1)
	if left < 0 {
		return 0, lockimpl.ErrSoldOut
	}
	if p.sold != nil {
		p.sold()
	}
	return left, nil
}

// queuedSale is a sale of a one-call design on a fake purchaser: no Redis needed.
func queuedSale(t testing.TB, s FlashSale, p *slowPurchaser) *lockSale {
	t.Helper()
	s = s.WithDefaults()
	p.left.Store(s.Stock)
	inj, err := faults.New(nil, faults.Servers{}, s.TTL, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	r := Redis{Locks: []redis.UniversalClient{nil}}
	ls := newLockSale(s, r, []Redis{r}, lockimpl.Impl{Name: "fake", NewPurchaser: func(lockimpl.Env) lockimpl.Purchaser { return p }}, inj)
	if !ls.oneCall {
		t.Fatal("a one-call purchaser is not run on the queue")
	}
	return ls
}

// runFor runs ls's buyers, with its progress reports, until they are done or ctx ends.
func (ls *lockSale) runFor(ctx context.Context) {
	t := newTally(ls.Sale)
	defer t.report(ls.Sale, ls.inj)()
	ls.run(ctx, t)
}

func outcomes(l *oracle.Ledger) map[oracle.Outcome]int {
	n := map[oracle.Outcome]int{}
	for _, e := range l.Entries {
		n[e.Outcome]++
	}
	return n
}

// TestQueuedBuyers: buyers of a one-call design are served by one worker per
// connection, no more at once than there are connections; under an open load their
// latency counts from their intended arrival; when the sale is stopped, those still
// queued are marked interrupted and the sale ends at once.
func TestQueuedBuyers(t *testing.T) {
	t.Run("connections bound the calls", func(t *testing.T) {
		p := &slowPurchaser{d: time.Millisecond}
		ls := queuedSale(t, FlashSale{Sale: Sale{Buyers: 200, Stock: 150, Conns: 4}}, p)
		ls.runFor(context.Background())
		if got := outcomes(ls.ledger); got[oracle.Bought] != 150 || got[oracle.SoldOut] != 50 {
			t.Errorf("outcomes %v, want 150 bought and 50 sold out", got)
		}
		if m := p.most.Load(); m != 4 {
			t.Errorf("at most %d purchases ran at once, want the 4 connections", m)
		}
	})
	t.Run("open load counts from arrival", func(t *testing.T) {
		// 20 buyers arrive over 19 ms; one connection serves one each 10 ms, so the
		// last waits about 180 ms beyond its arrival.
		p := &slowPurchaser{d: 10 * time.Millisecond}
		ls := queuedSale(t, FlashSale{Sale: Sale{Buyers: 20, Stock: 20, Conns: 1, Rate: 1000}}, p)
		ls.runFor(context.Background())
		last := ls.ledger.Entries[19]
		if last.Start < 18*time.Millisecond || last.Start > 20*time.Millisecond {
			t.Errorf("buyer 19 started at %s, want its arrival at 19 ms", last.Start)
		}
		if wait := last.Done - last.Start; wait < 150*time.Millisecond {
			t.Errorf("buyer 19 waited %s from its arrival; want about 180 ms of queueing", wait)
		}
		if worst := time.Duration(ls.t.rec.Histogram(results.Purchase).Max()) * time.Microsecond; worst < 150*time.Millisecond {
			t.Errorf("worst purchase latency %s; want the queueing in it", worst)
		}
	})
	t.Run("progress while it runs", func(t *testing.T) {
		// 150 purchases of 10 ms on one connection take 1.5 s: the once-a-second report
		// comes while buyers are still being served.
		var mu sync.Mutex
		var reports []Progress
		s := FlashSale{Sale: Sale{Buyers: 150, Stock: 150, Conns: 1, Progress: func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, p)
		}}}
		ls := queuedSale(t, s, &slowPurchaser{d: 10 * time.Millisecond})
		ls.runFor(context.Background())
		mu.Lock()
		defer mu.Unlock()
		if len(reports) == 0 || reports[0].Sold == 0 || reports[0].Sold >= 150 || reports[0].Buyers != 150 {
			t.Errorf("reports %+v; want one in the middle of the sale", reports)
		}
	})
	t.Run("stopped", func(t *testing.T) {
		// Stopped once a unit is sold, not at a set time: a busy machine may sell none
		// in the first 50 ms.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stopped atomic.Int64
		p := &slowPurchaser{d: 10 * time.Millisecond, sold: func() {
			stopped.CompareAndSwap(0, time.Now().UnixNano())
			cancel()
		}}
		ls := queuedSale(t, FlashSale{Sale: Sale{Buyers: 10000, Stock: 10000, Conns: 2}}, p)
		ls.runFor(ctx)
		if took := time.Since(time.Unix(0, stopped.Load())); took > 2*time.Second {
			t.Errorf("the stopped sale took %s to end", took)
		}
		r := oracle.Check(ls.ledger, nil)
		if r.Bought == 0 || r.Interrupted < 9000 || r.Bought+r.Interrupted != 10000 {
			t.Errorf("bought %d, interrupted %d; want a few bought and the rest interrupted", r.Bought, r.Interrupted)
		}
	})
}
