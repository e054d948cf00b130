package scenarios

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// runShards runs s as n shards side by side on the package's Redis, each as its own
// process would (its own clients), and returns their parts.
func runShards(t *testing.T, s FlashSale, lock string, n int) []results.Part {
	t.Helper()
	impl, err := lockimpl.Lookup(lock)
	if err != nil {
		t.Fatal(err)
	}
	s.Name, s.Prefix = t.Name(), "{test:"+t.Name()+"}"
	parts := make([]results.Part, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s := s
			s.Shard = Shard{Index: i, Count: n, Join: 30 * time.Second}
			c := redistest.Shared(t).Client(s.WithDefaults().Conns)
			defer c.Close()
			parts[i], errs[i] = s.RunPart(context.Background(), Single(c), impl)
			parts[i].ID, parts[i].Run.Source = "test", "shard "+s.Shard.String()
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
	}
	return parts
}

// TestShardsMergeToTheOneProcessVerdict runs a sale as four shards and merges them: lua
// is safe and seed-setnx oversells, as in one process, and the witness in the stock
// store sees seed-setnx's holders overlap, though no one clock saw them all.
func TestShardsMergeToTheOneProcessVerdict(t *testing.T) {
	sale := FlashSale{
		Sale:     Sale{Buyers: 200, Stock: 40, Conns: 8, Seed: 7},
		Critical: ReadThinkWrite, Think: Fixed(time.Millisecond), TTL: 2 * time.Second,
		Retry: lockimpl.Retry{Interval: 5 * time.Millisecond, Timeout: 20 * time.Second},
	}
	for _, tc := range []struct {
		lock string
		want oracle.Class
	}{{"lua", oracle.ClassSafe}, {"seed-setnx", oracle.ClassOversold}, {"token", oracle.ClassSafe}} {
		t.Run(tc.lock, func(t *testing.T) {
			parts := runShards(t, sale, tc.lock, 4)
			for _, p := range parts[1:] {
				if p.Final != nil {
					t.Errorf("shard %d read the final state; only the first should", p.Run.Shard.Index)
				}
			}
			run, err := Merge(parts)
			if err != nil {
				t.Fatal(err)
			}
			o := run.Oracle
			t.Logf("%s merged: %s; bought %d, final %d, witness %+v, latency n=%d", tc.lock, run.Verdict, o.Bought, o.FinalStock, o.Witness, run.Latency["purchase"].Count)
			if run.Verdict.Class != tc.want {
				t.Fatalf("merged class %s (%s), want %s", run.Verdict.Class, run.Verdict, tc.want)
			}
			if o.Buyers != 200 || o.Pending != 0 || !run.Complete {
				t.Errorf("merged ledger: %d buyers, %d pending, complete %v; want 200, 0, true", o.Buyers, o.Pending, run.Complete)
			}
			var bought int64
			for _, p := range parts {
				bought += p.Run.Latency["purchase"].Count
			}
			if got := run.Latency["purchase"].Count; got != bought || got != int64(o.Bought) {
				t.Errorf("merged purchase latencies %d, want the shards' sum %d = bought %d", got, bought, o.Bought)
			}
			if o.MissingOrders+o.DuplicateOrders+o.PhantomOrders != 0 && tc.want == oracle.ClassSafe {
				t.Errorf("orders as multisets: %d missing, %d duplicate, %d phantom", o.MissingOrders, o.DuplicateOrders, o.PhantomOrders)
			}
			switch tc.lock {
			case "lua":
				if o.Witness != nil {
					t.Errorf("lua holds no lock, yet a witness was read: %+v", o.Witness)
				}
			case "seed-setnx":
				if o.Witness == nil || o.Witness.Max < 2 || o.Overlaps == 0 {
					t.Errorf("the witness missed seed-setnx's overlaps: %+v, overlaps %d", o.Witness, o.Overlaps)
				}
			case "token":
				if o.Witness == nil || o.Witness.Max != 1 || o.Overlaps != 0 {
					t.Errorf("token's holders overlapped by the witness: %+v, overlaps %d", o.Witness, o.Overlaps)
				}
			}
		})
	}
}

// TestMergeRefuses checks that parts that do not make one sale are refused, naming why.
func TestMergeRefuses(t *testing.T) {
	sale := FlashSale{Sale: Sale{Buyers: 12, Stock: 3, Conns: 2}}
	parts := runShards(t, sale, "lua", 3)
	other := func(edit func(p *results.Part)) []results.Part {
		ps := make([]results.Part, len(parts))
		copy(ps, parts)
		edit(&ps[2])
		return ps
	}
	for _, tc := range []struct {
		name  string
		parts []results.Part
		want  string
	}{
		{"missing", parts[:2], "shard 2 of 3 missing"},
		{"twice", other(func(p *results.Part) { p.Run.Shard = &results.ShardInfo{Index: 1, Count: 3} }), "given twice"},
		{"seed", other(func(p *results.Part) { p.Run.Params.Seed = 9 }), "seed 9, not 0"},
		{"count", other(func(p *results.Part) { p.Run.Shard = &results.ShardInfo{Index: 2, Count: 4} }), "a shard of 4"},
		{"run", other(func(p *results.Part) { p.ID = "another" }), "of run another"},
		{"ledger", other(func(p *results.Part) { p.Entries = p.Entries[:1] }), "holds 1 buyers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Merge(tc.parts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if run, err := Merge(parts); err != nil || run.Verdict.Class != oracle.ClassSafe || run.Oracle.Bought != 3 {
		t.Fatalf("the whole set: %v, %s, bought %d", err, run.Verdict, run.Oracle.Bought)
	}
}

// TestShardSharesTheSchedule checks that a shard takes every n-th buyer of the one
// schedule, each at the start it was due at.
func TestShardSharesTheSchedule(t *testing.T) {
	whole := Sale{Buyers: 10, Rate: 100, RampTo: 200}
	for i := range 3 {
		s := whole
		s.Shard = Shard{Index: i, Count: 3}
		p := s.pacer()
		for k := range s.Shard.buyers(10) {
			if g := s.Shard.Global(k); p.Due(k) != whole.Pacer().Due(g) {
				t.Errorf("shard %d's buyer %d (buyer %d of the sale) due at %s, want %s", i, k, g, p.Due(k), whole.Pacer().Due(g))
			}
		}
	}
	if n := (Shard{Index: 1, Count: 3}).buyers(10); n != 3 {
		t.Errorf("shard 1/3 of 10 buyers has %d, want 3 (1, 4, 7)", n)
	}
	for _, bad := range []string{"4/4", "-1/2", "1", "a/b", "0/0"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("ParseShard(%q) accepted", bad)
		}
	}
}

// TestShardsUnderAPauseRate runs a sale under a pause rate as two shards: each shard
// pauses the holders drawn from their buyer numbers, and the merge keeps every shard's
// fault events and calls the fault exercised.
func TestShardsUnderAPauseRate(t *testing.T) {
	plan, err := faults.Parse("client-pause:p=0.5:for=30ms")
	if err != nil {
		t.Fatal(err)
	}
	sale := FlashSale{
		Sale:     Sale{Buyers: 60, Stock: 20, Conns: 4, Seed: 3, Faults: plan},
		Critical: ReadThinkWrite, TTL: 2 * time.Second,
		Retry: lockimpl.Retry{Interval: 5 * time.Millisecond, Timeout: 20 * time.Second},
	}
	parts := runShards(t, sale, "token", 2)
	run, err := Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	// Which buyers come to hold the lock, and on which shard, is the race's: a shard may
	// have few holders and pause none; the sale's 20 or more holders are paused at p=0.5.
	var events int
	for _, p := range parts {
		events += len(p.Run.Events)
	}
	t.Logf("merged: %s, %d events", run.Verdict, len(run.Events))
	if events == 0 || len(run.Events) != events || len(run.NotExercised) != 0 || run.Oracle.Bought != 20 {
		t.Errorf("merged %d events of %d, not exercised %v, bought %d of 20", len(run.Events), events, run.NotExercised, run.Oracle.Bought)
	}
}

// TestWitnessAgreesWithTheLedger runs sales in one process with the witness on: what the
// store saw can only be fewer overlaps than the ledger's (its marks lie inside the
// recorded holds), and it sees them where the ledger does.
func TestWitnessAgreesWithTheLedger(t *testing.T) {
	plan, err := faults.Parse("client-pause:p=0.2:for=100ms")
	if err != nil {
		t.Fatal(err)
	}
	base := FlashSale{
		Sale: Sale{Buyers: 100, Stock: 30, Conns: 8}, Critical: ReadThinkWrite, Think: Fixed(time.Millisecond),
		Retry: lockimpl.Retry{Interval: 5 * time.Millisecond, Timeout: 20 * time.Second}, Witness: true,
	}
	for _, tc := range []struct {
		lock  string
		plan  faults.Plan
		ttl   time.Duration // under the pause, below it; else well above any stall
		clash bool
	}{{"seed-setnx", nil, 2 * time.Second, true}, {"token", plan, 50 * time.Millisecond, true}, {"token", nil, 2 * time.Second, false}} {
		t.Run(tc.lock+"/"+tc.plan.String(), func(t *testing.T) {
			s := base
			s.Faults, s.TTL = tc.plan, tc.ttl
			r := run(t, s, tc.lock)
			w := r.Oracle.Witness
			if w == nil {
				t.Fatal("no witness was read")
			}
			t.Logf("ledger overlaps %d, witness %+v", r.Oracle.Overlaps, *w)
			if int(w.Overlaps) > r.Oracle.Overlaps || (w.Overlaps > 0) != (w.Max > 1) {
				t.Errorf("the witness saw more than the ledger: %d > %d, or max %d", w.Overlaps, r.Oracle.Overlaps, w.Max)
			}
			if tc.clash != (w.Overlaps > 0) {
				t.Errorf("witness overlaps %d, want some: %v", w.Overlaps, tc.clash)
			}
		})
	}
}
