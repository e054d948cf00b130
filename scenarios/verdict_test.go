package scenarios

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// run runs s with the named design on the package's Redis under a prefix of its own.
func run(t *testing.T, s FlashSale, lock string) results.Run {
	t.Helper()
	impl, err := lockimpl.Lookup(lock)
	if err != nil {
		t.Fatal(err)
	}
	s.Name = t.Name()
	if s.Prefix == "" {
		s.Prefix = "{test:" + t.Name() + "}"
	}
	s = s.WithDefaults()
	c := redistest.Shared(t).Client(s.Conns)
	defer c.Close()
	r, err := s.Run(context.Background(), Single(c), impl)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	o := r.Oracle
	t.Logf("%s: %s; bought %d of %d, final %d, overlaps %d, gave up %d, took %s",
		lock, r.Verdict, o.Bought, o.InitialStock, o.FinalStock, o.Overlaps, o.GaveUp, r.Duration.Round(time.Millisecond))
	return r
}

// contended is a sale where many buyers poll for a short-work lock. Its buyers are
// patient: on a loaded machine its sale once sold 38 of 100 units in 30 s, and a safe
// design's verdict must not hang on the machine's speed.
var contended = FlashSale{
	Sale:     Sale{Buyers: 400, Stock: 100, Conns: 32},
	Critical: ReadThinkWrite, Think: Fixed(time.Millisecond), TTL: 2 * time.Second,
	Retry: lockimpl.Retry{Interval: 20 * time.Millisecond, Timeout: 2 * time.Minute},
}

// slowWork is a sale whose every holder works past the lock's 1s TTL.
var slowWork = FlashSale{
	Sale:     Sale{Buyers: 20, Stock: 2, Conns: 8},
	Critical: ReadThinkWrite, Think: Fixed(1300 * time.Millisecond), TTL: time.Second,
	Retry: lockimpl.Retry{Interval: 10 * time.Millisecond, Timeout: 30 * time.Second},
}

// TestExpectedVerdicts asserts each design's documented verdict under the condition that
// breaks it, and under the one it is meant to survive.
func TestExpectedVerdicts(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	atomicSeed := contended
	atomicSeed.Critical = Atomic
	tests := []struct {
		name   string
		lock   string
		sale   FlashSale
		unsafe bool // want oversell and overlaps; else want exactly the stock sold, no overlap
	}{
		// The steal race: under contention holders overlap and read-think-write oversells.
		{"seed-setnx contended", "seed-setnx", contended, true},
		// Short work inside the TTL: the TTL locks hold.
		{"set-nx-ex contended", "set-nx-ex", contended, false},
		{"setnx-expire contended", "setnx-expire", contended, false},
		// Work past the TTL: the lock expires under its holder and a second buyer reads
		// the same stock.
		{"set-nx-ex slow work", "set-nx-ex", slowWork, true},
		{"setnx-expire slow work", "setnx-expire", slowWork, true},
		// The script needs no lock and never sells more than the stock.
		{"lua contended", "lua", FlashSale{Sale: Sale{Buyers: 2000, Stock: 500, Conns: 64}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, tt.sale, tt.lock)
			// A holder stalled past its 2 s lease by a loaded machine (make test's other
			// packages): a release that found its lock gone, after a lease outlived. A TTL
			// lock whose damage is its own shows it every time; a stall, rarely.
			for try := 2; !tt.unsafe && r.Verdict.String() != "SAFE" && try <= 3 &&
				r.Oracle.ExpiredAtRelease > 0 && r.Oracle.Outlived != nil; try++ {
				t.Logf("try %d: %s after a lease a live holder outlived: a stall on this machine; once more", try-1, r.Verdict)
				s := tt.sale
				s.Prefix = fmt.Sprintf("{test:%s:%d}", t.Name(), try)
				r = run(t, s, tt.lock)
			}
			o := r.Oracle
			// Every buyer tried; a lock's buyers, all starting at once, some more than once.
			if tr := r.Tries; tr == nil || tr.Buyers != tt.sale.Buyers || (tt.lock == "lua") != (tr.Max == 1) {
				t.Errorf("tries per buyer: %+v", tr)
			}
			if c := r.Commands; c == nil || c.CPUPerSaleUs <= 0 {
				t.Errorf("no Redis CPU per sale: %+v", c)
			}
			if tt.unsafe {
				if o.Oversold <= 0 || o.Overlaps <= 0 {
					t.Errorf("want oversell and overlaps, got oversold %d, overlaps %d", o.Oversold, o.Overlaps)
				}
				return
			}
			if r.Verdict.String() != "SAFE" || int64(o.Bought) != tt.sale.Stock || o.FinalStock != 0 || o.OrdersRecorded != tt.sale.Stock {
				t.Errorf("want SAFE with exactly %d sold, got %s: bought %d, final %d, orders %d",
					tt.sale.Stock, r.Verdict, o.Bought, o.FinalStock, o.OrdersRecorded)
			}
		})
	}
	// An atomic critical section makes even the broken seed lock sell no more than the
	// stock: lock failures oversell only when the update is not atomic.
	t.Run("seed-setnx atomic", func(t *testing.T) {
		t.Parallel()
		r := run(t, atomicSeed, "seed-setnx")
		if o := r.Oracle; o.Overlaps <= 0 || o.Oversold != 0 || o.LostUpdates != 0 || int64(o.Bought) != atomicSeed.Stock {
			t.Errorf("want overlaps but exactly %d sold, got %s: overlaps %d, bought %d", atomicSeed.Stock, r.Verdict, o.Overlaps, o.Bought)
		}
	})
}

// TestInterrupted: a sale whose context ends returns what it measured, marked incomplete,
// without waiting for its buyers' timeouts.
func TestInterrupted(t *testing.T) {
	t.Parallel()
	impl, _ := lockimpl.Lookup("set-nx-ex")
	s := FlashSale{Sale: Sale{Name: "interrupted", Buyers: 50, Stock: 100, Prefix: "{test:interrupted}"},
		Think: Fixed(200 * time.Millisecond), TTL: 5 * time.Second, Retry: lockimpl.Retry{Interval: 10 * time.Millisecond, Timeout: time.Minute}}
	c := redistest.Shared(t).Client(8)
	defer c.Close()
	// Interrupted once a unit is sold, not at a set time: a loaded machine may still be
	// setting the sale up 1.5 s in.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var interrupted time.Time
	go func() {
		for ctx.Err() == nil {
			if n, err := c.Get(ctx, "{test:interrupted}:stock").Int64(); err == nil && n < 100 {
				interrupted = time.Now()
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	r, err := s.Run(ctx, Single(c), impl)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if took := time.Since(interrupted); interrupted.IsZero() || took > 20*time.Second {
		t.Errorf("took %s after the interrupt (interrupted: %v)", took, !interrupted.IsZero())
	}
	if r.Complete || r.Error != "interrupted" {
		t.Errorf("want incomplete and interrupted, got complete=%v error=%q", r.Complete, r.Error)
	}
	if o := r.Oracle; o.Bought < 1 || o.Interrupted < 1 || o.Bought+o.Interrupted+o.SoldOut != o.Buyers {
		t.Errorf("want some bought and the rest interrupted, got %+v", o)
	}
	if n := c.Exists(context.Background(), "{test:interrupted}:stock", "{test:interrupted}:lock").Val(); n != 0 {
		t.Errorf("want the sale's keys deleted, %d remain", n)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		sale FlashSale
		ok   bool
	}{
		{"defaults", FlashSale{Sale: Sale{Buyers: 1}}, true},                              // everything else defaults
		{"no buyers", FlashSale{Sale: Sale{Buyers: 0}}, false},                            // nobody to buy
		{"negative stock", FlashSale{Sale: Sale{Buyers: 1, Stock: -1}}, false},            // not a stock
		{"bad critical", FlashSale{Sale: Sale{Buyers: 1}, Critical: "optimistic"}, false}, // unknown section
		{"negative ttl", FlashSale{Sale: Sale{Buyers: 1}, TTL: -time.Second}, false},      // not a TTL
		// A fault that cuts one application instance off needs another beside it.
		{"one app cut off, of one", FlashSale{Sale: Sale{Buyers: 1, Faults: faults.Plan{{Kind: faults.AppBlackhole}}}, Apps: 1}, false},
		{"one app cut off, of two", FlashSale{Sale: Sale{Buyers: 1, Faults: faults.Plan{{Kind: faults.AppBlackhole}}}, Apps: 2}, true},
		{"one app cut off, apps not given", FlashSale{Sale: Sale{Buyers: 1, Faults: faults.Plan{{Kind: faults.AppBlackhole}}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.sale.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate: want ok=%v, got %v", tt.ok, err)
			}
		})
	}
	cut := FlashSale{Sale: Sale{Buyers: 1, Faults: faults.Plan{{Kind: faults.AppBlackhole}}}}
	if got := cut.WithDefaults().Apps; got != 2 {
		t.Errorf("app-blackhole with apps not given: want 2 apps by default, got %d", got)
	}
}

// TestAppsFollowTheFaults: a sale's value leaves the instances out while they are the
// default, so that a caller who puts in a fault that strikes one instance of several (an
// analysis's cell, an exploration's draw) gets two; set apart from the default, they are
// kept as they were, and one instance under such a fault is refused.
func TestAppsFollowTheFaults(t *testing.T) {
	base, err := Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	v := base.Value("token")
	if got := v.Get("apps"); got != "" {
		t.Errorf("one instance, the default: want no apps setting, got %q", got)
	}
	v.Faults = string(faults.AppBlackhole)
	s, err := FlashSaleOf(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil || s.WithDefaults().Apps != 2 {
		t.Errorf("the default sale under app-blackhole: want two instances, got %d (%v)", s.WithDefaults().Apps, err)
	}
	if v := s.Value("token"); v.Get("apps") != "" {
		got := v.Get("apps")
		t.Errorf("two instances under app-blackhole, the default there: want no apps setting, got %q", got)
	}
	four := base
	four.Apps = 4
	if v := four.Value("token"); v.Get("apps") != "4" {
		got := v.Get("apps")
		t.Errorf("four instances: want apps 4 kept, got %q", got)
	}
	one := base
	one.Apps, one.Faults = 1, faults.Plan{{Kind: faults.AppPause}}
	if err := one.Validate(); err == nil {
		t.Error("one instance set under app-pause: want it refused")
	}
}
