package scenarios

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
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
	return runParts(t, n, s.WithDefaults().Conns, func(sh Shard, r Redis) (results.Part, error) {
		s := s
		s.Shard = sh
		return s.RunPart(context.Background(), r, impl)
	})
}

// runParts runs n shards side by side, each with clients of its own, and returns their
// parts, failing t on any shard's error.
func runParts(t *testing.T, n, conns int, run func(Shard, Redis) (results.Part, error)) []results.Part {
	t.Helper()
	parts := make([]results.Part, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sh := Shard{Index: i, Count: n, Join: 30 * time.Second}
			c := redistest.Shared(t).Client(conns)
			defer c.Close()
			parts[i], errs[i] = run(sh, Single(c))
			parts[i].ID, parts[i].Run.Source = "test", "shard "+sh.String()
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
	t.Parallel() // its own keys; it mostly waits
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
		{"attempt", other(func(p *results.Part) {
			p.Run.Shard = &results.ShardInfo{Index: 2, Count: 3, Attempt: p.Run.Shard.Attempt + 4_000_000}
		}), "different attempts"},
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
	// A shard missing is a lost shard: the record is incomplete, its buyers pending and
	// the verdict UNKNOWN, never SAFE on the buyers that are left.
	run, err := Merge(parts[:2])
	if err != nil || run.Complete || !slices.Equal(run.Shard.Lost, []int{2}) || run.Verdict.Class != oracle.ClassUnknown || run.Oracle.Pending != 4 {
		t.Fatalf("shard 2 missing: %v, complete %v, lost %v, %s, pending %d; want incomplete, [2], UNKNOWN, 4",
			err, run.Complete, run.Shard.Lost, run.Verdict, run.Oracle.Pending)
	}
	if !strings.Contains(run.Error, "shard 2 of 3 lost") {
		t.Errorf("incomplete for %q, want it to name the lost shard", run.Error)
	}
}

// TestLostShard loses one of three shards mid-sale, as a node lost: its connections go
// dead without a word and it never marks itself finished. The first shard says so
// within seconds of its own end, not after --shard-wait, and still reads the final
// state; the merge of the two that are left is incomplete and UNKNOWN.
func TestLostShard(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	impl, err := lockimpl.Lookup("lua")
	if err != nil {
		t.Fatal(err)
	}
	s := FlashSale{Sale: Sale{Buyers: 120, Stock: 100, Conns: 2, Rate: 60}}
	s.Name, s.Prefix = t.Name(), "{test:"+t.Name()+"}"
	parts := make([]results.Part, 3)
	errs := make([]error, 3)
	took := make([]time.Duration, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			s := s
			s.Shard = Shard{Index: i, Count: 3, Join: 30 * time.Second}
			c := redistest.Shared(t).Client(s.WithDefaults().Conns)
			defer c.Close()
			if i == 2 {
				go func() { // a second into the sale (two to meet), its node is gone
					time.Sleep(1500 * time.Millisecond)
					c.Close()
				}()
			}
			began := time.Now()
			parts[i], errs[i] = s.RunPart(context.Background(), Single(c), impl)
			took[i] = time.Since(began)
			parts[i].ID, parts[i].Run.Source = "test", "shard "+s.Shard.String()
		})
	}
	wg.Wait()
	var lost *LostShards
	if !errors.As(errs[0], &lost) || !slices.Equal(lost.Indexes, []int{2}) {
		t.Fatalf("the first shard ended with %v, want shard 2 lost", errs[0])
	}
	t.Logf("first shard: %s in %s; second: %v in %s", errs[0], took[0].Round(time.Millisecond), errs[1], took[1].Round(time.Millisecond))
	if parts[0].Final == nil || parts[0].Run.Complete {
		t.Errorf("the first shard's record: final read %v, complete %v; want the final state read and the record incomplete", parts[0].Final != nil, parts[0].Run.Complete)
	}
	if slack := took[0] - took[1]; slack > Silence+2*time.Second {
		t.Errorf("the first shard ended %s after the second: the loss took longer than the %s of silence to see", slack, Silence)
	}
	if !slices.Equal(parts[0].Run.Shard.Lost, []int{2}) {
		t.Errorf("the first shard's record names %v lost, want [2]", parts[0].Run.Shard.Lost)
	}
	// Had shard 2 come back and written its record, the merge of all three still
	// judges only what stands without it: the final state was read before it finished.
	back := parts[2]
	back.Entries = make([]oracle.Entry, len(back.Entries))
	for i := range back.Entries {
		back.Entries[i].Outcome = oracle.Bought
	}
	if all, err := Merge(parts); err != nil || all.Complete || all.Oracle.LostUpdates != 0 {
		t.Errorf("all three, the lost one back: %v, complete %v, %s; want an incomplete record with no lost update judged against a stale final state",
			err, all.Complete, all.Verdict)
	}
	run, err := Merge(parts[:2])
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("merged: %s; %s", run.Verdict, run.Error)
	if run.Complete || run.Verdict.Class != oracle.ClassUnknown || run.Oracle.Pending != 40 || !slices.Equal(run.Shard.Lost, []int{2}) {
		t.Errorf("merged: complete %v, %s, pending %d, lost %v; want incomplete, UNKNOWN, 40 pending, [2]", run.Complete, run.Verdict, run.Oracle.Pending, run.Shard.Lost)
	}
}

// TestShardBarrier: a shard alone gives up after its wait with one line that says how
// many came (one gone while it waited is not counted), and a shard arriving after the
// sale began without it (a lost shard's replacement) is refused at once.
func TestShardBarrier(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	c := redistest.Shared(t).Client(2)
	defer c.Close()
	ctx := context.Background()
	prefix := "{test:" + t.Name() + "}"
	k := shardKeys(prefix)
	defer c.Del(ctx, k.all()...)

	// A shard that stamped its arrival once and died (SIGKILL while it waited) stops
	// counting once its stamp is stale: it cannot complete a later barrier.
	meetScript.Run(ctx, c, []string{k.arrived, k.start, k.owners}, 1, 2, startMargin.Microseconds(), 60_000, stale.Milliseconds(), "gone")
	time.Sleep(stale + 100*time.Millisecond)
	began := time.Now()
	_, _, err := Shard{Index: 0, Count: 2, Join: 300 * time.Millisecond}.meet(ctx, c, prefix)
	if err == nil || !strings.Contains(err.Error(), "only 1 of 2 shards arrived within 300ms") || time.Since(began) > 2*time.Second {
		t.Fatalf("alone at the barrier: %v after %s", err, time.Since(began))
	}
	c.ZRem(ctx, k.arrived, 0) // as startTogether leaves the barrier it gave up on
	meetBoth(t, c, prefix)
	time.Sleep(10 * time.Millisecond)
	_, _, err = Shard{Index: 1, Count: 2, Join: 5 * time.Second}.meet(ctx, c, prefix)
	if !errors.Is(err, ErrSaleUnderWay) {
		t.Fatalf("a shard arriving after the start: %v, want ErrSaleUnderWay", err)
	}
	t.Log(err)
}

// TestShardIndexIsClaimed: a second process given an index another process is waiting
// with (an earlier attempt's task retried by the orchestrator, as CI once saw meet the
// rerun's shards) is refused at once, naming the first, and leaves the first's place
// as it was: the first meets the others. One whose holder died while it waited (its
// stamp stale) takes the index over.
func TestShardIndexIsClaimed(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	c := redistest.Shared(t).Client(2)
	defer c.Close()
	ctx := context.Background()
	prefix := "{test:" + t.Name() + "}"
	k := shardKeys(prefix)
	defer c.Del(ctx, k.all()...)

	first := make(chan error, 1)
	go func() {
		_, _, err := (Shard{Index: 1, Count: 2, Join: 10 * time.Second}).meet(ctx, c, prefix)
		first <- err
	}()
	for n := int64(0); n == 0; n, _ = c.ZCard(ctx, k.arrived).Result() {
		time.Sleep(5 * time.Millisecond)
	}
	_, _, err := (Shard{Index: 1, Count: 2, Join: 5 * time.Second}).meet(ctx, c, prefix)
	if !errors.Is(err, ErrShardTaken) || !strings.Contains(err.Error(), claimant) {
		t.Fatalf("a second process as shard 1: %v, want ErrShardTaken naming %q", err, claimant)
	}
	t.Log(err)
	if _, _, err := (Shard{Index: 0, Count: 2, Join: 5 * time.Second}).meet(ctx, c, prefix); err != nil {
		t.Fatalf("shard 0 beside the first shard 1: %v", err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the first shard 1, after a second was refused: %v", err)
	}

	// A holder that died while it waited no longer holds its index once its stamp is stale.
	c.Del(ctx, k.all()...)
	meetScript.Run(ctx, c, []string{k.arrived, k.start, k.owners}, 1, 2, startMargin.Microseconds(), 60_000, stale.Milliseconds(), "gone")
	time.Sleep(stale + 100*time.Millisecond)
	meetBoth(t, c, prefix)
}

// meetBoth meets shards 0 and 1 of two at prefix's barrier, side by side, each waiting
// up to 5 s, and fails t for either that does not pass it.
func meetBoth(t *testing.T, c redis.UniversalClient, prefix string) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			if _, _, err := (Shard{Index: i, Count: 2, Join: 5 * time.Second}).meet(context.Background(), c, prefix); err != nil {
				t.Errorf("shard %d: %v", i, err)
			}
		})
	}
	wg.Wait()
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
	t.Parallel() // its own keys; it mostly waits
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
	t.Parallel() // its own keys; it mostly waits
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

// TestLostShardKeepsTheEvidence: what the shards that are left measured stands. A sale
// whose survivors alone bought more than the stock is OVERSOLD, lost shard or not, and
// still incomplete.
func TestLostShardKeepsTheEvidence(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	sale := FlashSale{
		Sale:     Sale{Buyers: 120, Stock: 10, Conns: 4, Seed: 5},
		Critical: ReadThinkWrite, Think: Fixed(time.Millisecond), TTL: 2 * time.Second,
		Retry: lockimpl.Retry{Interval: 5 * time.Millisecond, Timeout: 20 * time.Second},
	}
	parts := runShards(t, sale, "seed-setnx", 3)
	run, err := Merge([]results.Part{parts[0], parts[2]})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("shard 1 left out: %s, bought %d of %d, %s", run.Verdict, run.Oracle.Bought, sale.Stock, run.Error)
	if run.Complete || run.Verdict.Class != oracle.ClassOversold || run.Oracle.Bought <= 10 || !slices.Equal(run.Shard.Lost, []int{1}) {
		t.Errorf("complete %v, %s, bought %d, lost %v; want incomplete, OVERSOLD on the survivors' purchases, shard 1 lost", run.Complete, run.Verdict, run.Oracle.Bought, run.Shard.Lost)
	}
}

// runQueueShards runs s as n shards side by side, as runShards does.
func runQueueShards(t *testing.T, s QueueSale, queue string, n int) []results.Part {
	t.Helper()
	impl, err := queueimpl.Lookup(queue)
	if err != nil {
		t.Fatal(err)
	}
	s.Name, s.Prefix = t.Name(), "{test:"+t.Name()+"}"
	return runParts(t, n, s.WithDefaults().Conns, func(sh Shard, r Redis) (results.Part, error) {
		s := s
		s.Shard = sh
		return s.RunPart(context.Background(), r, impl)
	})
}

// TestQueueShardsMerge runs queue sales as three shards, each enqueueing its share of
// the orders and running its share of the workers on the one queue, and merges them: the
// union earns what the sale earns in one process, an order enqueued by one shard and
// fulfilled by another's worker is no loss, and a worker fault at a rate strikes in
// shards as in one process (list loses the tasks of the workers it kills; stream hands
// them out again).
func TestQueueShardsMerge(t *testing.T) {
	// Not beside the other tests: there, a worker descheduled between its dequeue and
	// the record of it made a merged sale with no fault read REORDERED (1 of 5 make
	// test runs, stream and zpopmin; a second's visibility did not help). It still does
	// now and then (zpopmin, once in a make test on a loaded machine): the takes are
	// stamped by three shards' workers, and a stamp can land after a later take's. So
	// with no fault, REORDERED is admitted beside SAFE; the counts below hold for both.
	crash, err := faults.Parse("worker-crash:p=0.05")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		queue string
		plan  faults.Plan
		want  oracle.Class
	}{
		{"stream", nil, oracle.ClassSafe}, {"list", nil, oracle.ClassSafe}, {"zpopmin", nil, oracle.ClassSafe},
		{"list", crash, oracle.ClassLost}, {"stream", crash, oracle.ClassSafe},
	} {
		t.Run(tc.queue+"/"+tc.plan.String(), func(t *testing.T) {
			sale := QueueSale{Sale: Sale{Buyers: 300, Stock: 200, Conns: 4, Seed: 3, Faults: tc.plan}, Workers: 6, Work: time.Millisecond, Visibility: 300 * time.Millisecond}
			parts := runQueueShards(t, sale, tc.queue, 3)
			var crossed int
			for _, p := range parts {
				for _, take := range p.Queue.Takes {
					if g, _ := strconv.Atoi(take.ID); g%3 != p.Run.Shard.Index {
						crossed++
					}
				}
			}
			run, err := Merge(parts)
			if err != nil {
				t.Fatal(err)
			}
			q := run.Queue
			t.Logf("merged: %s; %d accepted, %d fulfilled, %d refused, %d lost, %d deliveries (%d of another shard's orders)", run.Verdict, q.Accepted, q.Fulfilled, q.Refused, q.Lost, q.Deliveries, crossed)
			class := run.Verdict.Class
			if tc.want == oracle.ClassSafe && class == oracle.ClassReordered {
				class = oracle.ClassSafe // the stamps' race above, not the queue's order
			}
			if class != tc.want || !run.Complete || run.Shard.Count != 3 || q.Accepted != 300 {
				t.Errorf("merged %s (complete %v, %d accepted), want %s of all 300", run.Verdict, run.Complete, q.Accepted, tc.want)
			}
			if tc.want == oracle.ClassSafe && (q.Fulfilled != 200 || q.Refused != 100) {
				t.Errorf("fulfilled %d, refused %d; want the stock's 200 and the other 100", q.Fulfilled, q.Refused)
			}
			if crossed == 0 {
				t.Error("no worker took another shard's order: the shards did not share one queue")
			}
			if run.AsExpected != nil && !*run.AsExpected && class == run.Verdict.Class {
				t.Errorf("merged %s, documented %v", run.Verdict, run.Expected)
			}
			// A shard lost: its orders are unknown, never taken to be none.
			if part, err := Merge(parts[1:]); err != nil || part.Complete || part.Verdict.Class == oracle.ClassSafe || !slices.Equal(part.Shard.Lost, []int{0}) {
				t.Errorf("shard 0 lost: %v, complete %v, %s, lost %v; want an incomplete record, not SAFE", err, part.Complete, part.Verdict, part.Shard.Lost)
			}
		})
	}
}

// TestShardNotYetBeatingIsNotLost: a shard that passed the barrier but has not stamped
// its first heartbeat yet (a slow process) is silent since the sale's start, not lost at
// once: the first shard, done with its buyers, waits for it, and takes it for lost only
// once Silence has passed since the start.
func TestShardNotYetBeatingIsNotLost(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	c := redistest.Shared(t).Client(2)
	defer c.Close()
	ctx := context.Background()
	prefix := "{test:" + t.Name() + "}"
	k := shardKeys(prefix)
	defer c.Del(ctx, k.all()...)
	meetBoth(t, c, prefix)
	lead := Shard{Index: 0, Count: 2, Join: 10 * time.Second}
	stop := lead.beat(ctx, c, prefix)
	// Shard 1 beats only after a while, as a process slower off the barrier does, and
	// finishes.
	time.AfterFunc(time.Second, func() {
		s1 := Shard{Index: 1, Count: 2, Join: 10 * time.Second}
		stop1 := s1.beat(ctx, c, prefix)
		time.Sleep(500 * time.Millisecond)
		stop1()
		s1.finish(ctx, c, prefix)
	})
	err := lead.finish(ctx, c, prefix)
	stop()
	if err != nil {
		t.Errorf("a shard slow to its first heartbeat: %v, want it waited for", err)
	}
	// One that never beats is lost once Silence has passed since the start, not before.
	c.Del(ctx, k.all()...)
	meetBoth(t, c, prefix)
	began := time.Now()
	var lost *LostShards
	if err := lead.finish(ctx, c, prefix); !errors.As(err, &lost) || time.Since(began) < Silence-time.Second {
		t.Errorf("a shard that never beats: %v after %s, want it lost after about %s", err, time.Since(began).Round(time.Millisecond), Silence)
	}
}
