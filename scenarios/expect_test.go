package scenarios_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// documented is each plan v documents a verdict for, with the classes, in matrix order.
func documented(v faults.Verdicts, a faults.Applies) (plans []faults.Plan, want [][]oracle.Class) {
	if v.None != nil {
		plans, want = append(plans, nil), append(want, v.None)
	}
	for _, k := range faults.Kinds(a) {
		if c, ok := v.Under[k]; ok {
			plans, want = append(plans, faults.Plan{{Kind: k}}), append(want, c)
		}
	}
	return plans, want
}

// onClients reports whether every fault of plan acts on the sale's own clients, with no
// server of its own to start.
func onClients(plan faults.Plan) bool {
	for _, f := range plan {
		if s, _ := faults.Lookup(f.Kind); s.Needs != (faults.Needs{}) {
			return false
		}
	}
	return true
}

// cell is one cell of a documented matrix: a design (a queue's with its fulfil) under a
// fault plan, and the classes the design documents there.
type cell struct {
	design string
	plan   faults.Plan
	want   []oracle.Class
}

func (c cell) String() string { return c.design + "/" + c.plan.String() }

// breaks reports whether the design documents damage in the cell: no class it admits
// there is SAFE.
func (c cell) breaks() bool {
	return !slices.ContainsFunc(c.want, func(k oracle.Class) bool { r, _ := k.Rank(); return r == 0 })
}

// A selection picks the cells of a documented matrix (all, in matrix order) that a suite
// asserts: make test the quick cover, make test-long the rest, so that the two together
// assert every documented verdict once.
type selection func(c cell, all []cell) bool

// quick is make test's cover of a documented matrix, among the cells whose faults act on
// the sale's own clients: every design with no fault and where it first breaks (a broken
// design shown to break), and under every fault plan the first design documented safe
// there and the first documented to break (a safe one shown not to).
func quick(c cell, all []cell) bool {
	if !onClients(c.plan) {
		return false
	}
	firstDesign := func(pick func(cell) bool) bool {
		i := slices.IndexFunc(all, func(o cell) bool { return onClients(o.plan) && pick(o) })
		return i >= 0 && all[i].String() == c.String()
	}
	samePlan := func(o cell) bool { return o.plan.String() == c.plan.String() }
	sameDesign := func(o cell) bool { return o.design == c.design }
	return len(c.plan) == 0 ||
		firstDesign(func(o cell) bool { return sameDesign(o) && o.breaks() }) ||
		firstDesign(func(o cell) bool { return samePlan(o) && o.breaks() }) ||
		firstDesign(func(o cell) bool { return samePlan(o) && !o.breaks() })
}

// rest is make test-long's: every cell quick leaves out.
func rest(c cell, all []cell) bool { return !quick(c, all) }

// TestDocumentedVerdicts runs every design on the preset make bench runs, with no fault
// and under the faults on its clients quick picks, and asserts its documented verdict:
// the negative control oversells, fencing and the lock-free designs never oversell, the
// TTL locks break where they say they do. TestEveryDocumentedVerdict asserts the rest.
func TestDocumentedVerdicts(t *testing.T) {
	t.Parallel() // beside the other matrices: their sales mostly wait on TTLs
	documentedVerdicts(t, quick)
}

func documentedVerdicts(t *testing.T, pick selection) {
	earnsDocumented(t, "fault-sale", pick, func(impl lockimpl.Impl) faults.Verdicts { return impl.Documented },
		func(t *testing.T, impl lockimpl.Impl, plan faults.Plan, run results.Run) {
			brokenOrOutlived(t, impl.Name, plan, run.Oracle)
		})
}

// earnsDocumented runs every design in the preset named preset under every fault plan
// pick takes of those verdicts(design) documents, asserts the verdict, and has check
// look further.
func earnsDocumented(t *testing.T, preset string, pick selection, verdicts func(lockimpl.Impl) faults.Verdicts, check func(*testing.T, lockimpl.Impl, faults.Plan, results.Run)) {
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup(preset)
	if err != nil {
		t.Fatal(err)
	}
	var all []cell
	for _, impl := range lockimpl.All() {
		plans, wants := documented(verdicts(impl), faults.Locks)
		for i, plan := range plans {
			all = append(all, cell{impl.Name, plan, wants[i]})
		}
	}
	for _, c := range all {
		if !pick(c, all) {
			continue
		}
		impl, _ := lockimpl.Lookup(c.design)
		plan := c.plan
		t.Run(c.String(), func(t *testing.T) {
			if impl.LockNodes() == 1 {
				// GOMAXPROCS at a time: most of a sale is waiting. Redlock runs alone:
				// with five servers' worth of commands it nears livelock under load.
				t.Parallel()
			}
			s := sale
			s.Faults = plan
			if !slices.Contains(c.want, oracle.ClassStuck) {
				// Patient buyers where no stuck sale is documented: raced, under the long
				// suite's net-latency, redislock's buyers gave up on 3 units of a SAFE
				// sale within the preset's patience (STUCK). A design that does leave the
				// stock stuck still does, only later.
				s.Retry.Timeout = max(s.Retry.Timeout, 2*time.Minute)
			}
			for try := 1; ; try++ {
				s.Prefix = fmt.Sprintf("{%s:%s:%s:%d}", preset, impl.Name, plan, try)
				run := rigtest.On(t, h, rig.ForLock(impl, plan, s.WithDefaults().Conns),
					func(ctx context.Context, r scenarios.Redis) (results.Run, error) { return s.Run(ctx, r, impl) })
				if !slices.Contains(c.want, run.Verdict.Class) && try < stallTries && stalled(impl.Name, run.Oracle) {
					t.Logf("try %d: %s, through a lease a live holder outlived: a stall past the TTL on this machine; once more", try, run.Verdict)
					continue
				}
				if !slices.Contains(c.want, run.Verdict.Class) {
					t.Errorf("want %v, got %s (%s); events %+v", c.want, run.Verdict.Cell(), run.Verdict, run.Events)
				}
				check(t, impl, plan, run)
				break
			}
		})
	}
}

// stallTries bounds the sales of a cell whose damage came through a stall. A holder
// that outlives its lease (its 1 ms of work taking over the 1 s TTL) harms any TTL lock,
// and no design documents the machine's stalls: on two CPUs, the race detector on and
// four sales at once, token under crash-acquire once read OVERSOLD 3 that way (OVERLAP
// 4, none broken, a release that found its lock expired) where it documents SAFE. Such a
// cell runs again, up to three sales in all: a design whose damage is its own shows it
// every time, and a stall every time would mean a machine too loaded to judge.
const stallTries = 3

// stalled reports whether a sale's damage came only through leases live holders
// outlived: overlaps, none of them a broken lock, and a release that found its lock
// already expired. A design whose release is a bare DEL (set-nx-ex, setnx-expire) turns
// such a stall into a broken lock by itself (the late DEL frees the next holder's lock:
// make test's load saw it under crash-acquire), so for those a broken lock that follows
// an outlived lease is a stall too.
func stalled(design string, o oracle.Report) bool {
	bareDel := design == "set-nx-ex" || design == "setnx-expire"
	return o.Overlaps > 0 && o.ExpiredAtRelease > 0 && (o.LockBroken == 0 || bareDel && o.Outlived != nil)
}

// brokenOrOutlived asserts whose fault an overlap was. A lock whose key a fault takes
// from under a live holder (a failover to a replica that missed it, an eviction, a clock
// that jumps past its expiry) lets a second holder in while the first is inside its
// lease: LOCK-BROKEN. On a loaded machine the holder may outlive its lease before the
// fault strikes (a 1.2 s write under a 1 s lease, with the other packages' tests
// running): the second holder then comes after that lease, an overlap the oracle rightly
// does not call broken, and the test asks only that none of them came inside it. Slow work, a
// paused holder or a paused server keep the key until its TTL has run out under the
// holder: an outlived lease, never a broken lock, but for the designs that break their
// promise by themselves (none grants everyone; seed-setnx's steal race) and those whose
// release is a bare DEL (set-nx-ex, setnx-expire): the late holder's DEL frees whoever
// holds the lock by then, inside their lease, when anyone does (a race: CI saw it under
// load).
func brokenOrOutlived(t *testing.T, design string, plan faults.Plan, o oracle.Report) {
	t.Helper()
	if design == "none" || design == "seed-setnx" || len(plan) != 1 {
		return
	}
	switch plan[0].Kind {
	case faults.Failover, faults.Evict, faults.ClockJump:
		for _, v := range o.Violations {
			if o.LockBroken == 0 && v.Second.Enter < v.First.Sure() {
				t.Errorf("the key lost under a live holder: want LOCK-BROKEN, got %d overlaps none broken: %+v", o.Overlaps, o.Violations)
				break
			}
		}
	case faults.SlowWork, faults.ClientPause, faults.RedisPause:
		if o.LockBroken > 0 && design != "set-nx-ex" && design != "setnx-expire" {
			t.Errorf("a lease outlived: want no LOCK-BROKEN, got %d: %+v", o.LockBroken, o.Violations)
		}
	}
	if o.Overlaps > 0 && (len(o.Violations) == 0 || o.Violations[0].Second.Enter < o.Violations[0].First.Enter) {
		t.Errorf("want the worst overlaps with their holds, got %+v", o.Violations)
	}
}

// TestDocumentedQueueVerdicts runs every queue design with each fulfil on the preset
// make bench runs, with no fault and under the faults on its workers quick picks, and
// asserts its documented verdict: list and zpopmin lose exactly the crashed workers'
// tasks, reliable-list and stream lose none and duplicate only what an idempotent fulfil
// absorbs, no design oversells. TestEveryDocumentedQueueVerdict asserts the rest.
func TestDocumentedQueueVerdicts(t *testing.T) {
	t.Parallel()
	documentedQueueVerdicts(t, quick)
}

func documentedQueueVerdicts(t *testing.T, pick selection) {
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	var all []cell
	for _, impl := range queueimpl.All() {
		for _, fulfil := range scenarios.Fulfils {
			plans, wants := documented(impl.Documented.For(fulfil == scenarios.Idempotent), faults.Queues)
			for i, plan := range plans {
				all = append(all, cell{impl.Name + "/" + string(fulfil), plan, wants[i]})
			}
		}
	}
	for _, c := range all {
		if !pick(c, all) {
			continue
		}
		name, f, _ := strings.Cut(c.design, "/")
		impl, _ := queueimpl.Lookup(name)
		t.Run(c.String(), func(t *testing.T) {
			t.Parallel()
			earnsQueueVerdict(t, h, sale, impl, c.plan, scenarios.Fulfil(f), c.want)
		})
	}
}

// earnsQueueVerdict runs impl with fulfil under plan on sale and asserts what its design
// documents there (want) and what every queue design owes: no oversell, every death
// accounted for, no delivery under a live lease where the design leases.
func earnsQueueVerdict(t *testing.T, h *rig.Harness, sale scenarios.QueueSale, impl queueimpl.Impl, plan faults.Plan, fulfil scenarios.Fulfil, want []oracle.Class) {
	s := sale
	s.Faults, s.Fulfil = plan, fulfil
	var run results.Run
	// A race a design documents as firing (seed-zset's steal with no fault,
	// 14 to 16 duplicates of 200 in most sales) may miss one sale on a loaded
	// machine: it must fire in one of three, and a design that became safe
	// still fails.
	for try := 1; try <= 3; try++ {
		s.Prefix = fmt.Sprintf("{test:%s:%s:%s:%d}", impl.Name, plan, fulfil, try)
		run = rigtest.On(t, h, rig.ForQueue(plan, s.WithDefaults().Conns),
			func(ctx context.Context, r scenarios.Redis) (results.Run, error) { return s.Run(ctx, r, impl) })
		if run.Verdict.Class != oracle.ClassSafe || slices.Contains(want, oracle.ClassSafe) {
			break
		}
		t.Logf("sale %d: the documented race did not fire (%s)", try, run.Verdict)
	}
	q := run.Queue
	if !slices.Contains(want, run.Verdict.Class) || q.Oversold > 0 {
		t.Errorf("want %v, got %s (%s): %+v", want, run.Verdict.Cell(), run.Verdict, q)
	}
	if plan.Has(faults.WorkerCrash) && strings.HasPrefix(impl.Guarantee, "at most once") && q.Lost != q.Crashed {
		t.Errorf("want exactly the %d crashed workers' tasks lost, got %d", q.Crashed, q.Lost)
	}
	// Every death is accounted for: a design that gives a dead worker's task
	// back does so for each, and each redelivery is timed.
	if plan.Has(faults.WorkerCrash) {
		rc, l := run.Recovery, run.Latency[results.Recovery.String()]
		switch {
		case rc == nil || rc.Deaths != q.Crashed:
			t.Errorf("want %d deaths in the recovery record, got %+v", q.Crashed, rc)
		// seed-zset's race may have handed a dying worker's task to another
		// worker before the death: safe, though that task came back never.
		case run.Verdict.Class == oracle.ClassSafe && impl.Name != "seed-zset" && (rc.Never > 0 || l.Count != int64(rc.Deaths)):
			t.Errorf("a safe sale: want every task redelivered and timed, got %+v, %d timed", rc, l.Count)
		}
	}
	// A lease queue never hands a task out while it is leased (seed-zset's
	// race does, and reliable-list's reapers in step do; the others wait
	// for the visibility timeout).
	racy := impl.Name == "seed-zset" || impl.Name == "reliable-list" && plan.Has(faults.Reclaimers)
	if !racy && q.LeaseOverlaps > 0 {
		t.Errorf("want no delivery under a live lease, got %d", q.LeaseOverlaps)
	}
}

// TestEveryDesignDocumented: each design stockbench ships documents its verdict with no
// fault and under every fault of its sale it does not leave to chance.
func TestEveryDesignDocumented(t *testing.T) {
	for _, impl := range lockimpl.All() {
		if v := impl.Documented; v.None == nil || len(v.Under) < len(faults.Kinds(faults.Locks))-1 {
			t.Errorf("lock %s documents %d faults", impl.Name, len(v.Under))
		}
	}
	for _, impl := range queueimpl.All() {
		for _, f := range scenarios.Fulfils {
			if v := impl.Documented.For(f == scenarios.Idempotent); v.None == nil || len(v.Under) != len(faults.Kinds(faults.Queues)) {
				t.Errorf("queue %s with a %s fulfil documents %d faults", impl.Name, f, len(v.Under))
			}
		}
	}
}

// TestReapersInStep: reliable-list's reaper reads what is overdue and then moves each
// entry, so reapers in step hand the dead worker's task back once per reaper, to live
// workers: a delivery under a live lease, which an idempotent fulfil does not hide. A
// race, in 11 of 12 sales seen alone, and three sales in a row missed it once beside the
// other tests' load on a fresh CI machine: it must fire in one of twenty (each under a
// second; the tries stop at the first), and a reaper made atomic fails here.
func TestReapersInStep(t *testing.T) {
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	impl, err := queueimpl.Lookup("reliable-list")
	if err != nil {
		t.Fatal(err)
	}
	plan, _ := faults.Parse("reclaimers")
	var seen []string
	for try := 1; try <= 20; try++ {
		s := sale
		s.Faults, s.Fulfil, s.Prefix = plan, scenarios.Idempotent, fmt.Sprintf("{test:reapers:%d}", try)
		run := rigtest.On(t, h, rig.ForQueue(plan, s.WithDefaults().Conns),
			func(ctx context.Context, r scenarios.Redis) (results.Run, error) { return s.Run(ctx, r, impl) })
		if run.Queue.LeaseOverlaps > 0 && slices.ContainsFunc(run.Events, func(e faults.Event) bool {
			return strings.Contains(e.Detail, "reapers in step handed back")
		}) {
			return
		}
		seen = append(seen, run.Verdict.String())
	}
	t.Errorf("want a delivery under a live lease in one of twenty sales, got %v", seen)
}
