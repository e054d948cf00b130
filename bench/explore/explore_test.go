package explore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// fake is a pretend lock: "bare" breaks (LOCK-BROKEN) whenever its holders work past
// the TTL, as set-nx-ex's bare DEL frees the next holder's lock; "checked" only
// overlaps (an outlived lease), as token does. Both refuse clock-jump, as a design
// whose Outside names it. No Redis: this tests the search, the shrink, the rates and
// the test, not a design.
func fake(ctx context.Context, s results.Sale, _ int) (results.Run, error) {
	if strings.Contains(s.Faults, "clock-jump") {
		return results.Run{}, ErrRefused
	}
	ttl, _ := time.ParseDuration(s.Get("ttl"))
	work := s.Get("think")
	if strings.HasPrefix(work, "longtail:") {
		work = strings.Split(work, ",")[1]
	}
	think, _ := time.ParseDuration(work)
	run := results.Run{Complete: true, Verdict: oracle.Verdict{Class: oracle.ClassSafe}, Params: results.Params{Seed: s.Seed()}}
	if think >= ttl {
		run.Verdict = oracle.Verdict{Class: oracle.ClassOverlap, Count: 1, Findings: []string{"OVERLAP 1"}}
		if s.Design == "bare" {
			run.Verdict = oracle.Verdict{Class: oracle.ClassBroken, Count: 1, Findings: []string{"LOCK-BROKEN 1"}}
		}
	}
	return run, ctx.Err()
}

func designs(names ...string) []results.Sale {
	var out []results.Sale
	for _, n := range names {
		out = append(out, results.Sale{Kind: results.LockSale, Scenario: "fault-sale", Design: n, Faults: "none",
			Settings: []results.Setting{{Name: "buyers", Value: "100"}, {Name: "stock", Value: "30"}, {Name: "seed", Value: "1"},
				{Name: "think", Value: "1ms"}, {Name: "ttl", Value: "1s"}}})
	}
	return out
}

// TestExploreTellsDesignsApart: with nobody naming a work time, the search finds that
// work past the TTL breaks "bare" and not "checked", shrinks the sale, and reports
// LOCK-BROKEN 10/10 against 0/10 as significant; a design against itself differs
// nowhere. Refused draws are passed over, and the same seed draws the same sales.
var allVsNone = regexp.MustCompile(`^bare is worse than checked here: LOCK-BROKEN (9/9|10/10) vs 0/(9|10), p=`)

func TestExploreTellsDesignsApart(t *testing.T) {
	run := func(names ...string) *Report {
		rep, err := Explore(context.Background(), Config{Designs: designs(names...), Space: NewSpace(results.LockSale, false, nil),
			Budget: 2 * time.Second, Parallel: 4, Run: fake})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run("checked", "bare")
	d := rep.Differences()
	// Every measured sale of bare broken, none of checked: 10/10 vs 0/10, or fewer where
	// the 2 s budget on a loaded machine cut a rerun short (9/9 vs 0/10 seen in make test).
	if len(d) == 0 || !allVsNone.MatchString(d[0]) {
		t.Fatalf("differences: %q", d)
	}
	if !strings.Contains(d[0], "work >= TTL") {
		t.Errorf("the difference should name the timing it needs: %s", d[0])
	}
	shrunk := 0
	for _, f := range rep.Findings {
		if !f.Shrunk { // cut short by the budget
			continue
		}
		shrunk++
		if b, s := f.Smallest.Get("buyers"), f.Smallest.Get("stock"); b != "1" || s != "1" || strings.Contains(f.Smallest.Faults, "+") {
			t.Errorf("%s, %s: smallest sale of %s buyers, %s units, faults %s: want 1, 1 and one fault at most (the fake needs no contention nor fault)",
				f.Faults, f.Timing, b, s, f.Smallest.Faults)
		}
	}
	if shrunk == 0 {
		t.Errorf("no finding was shrunk")
	}
	if n := rep.NeverStruck(); len(n) != 1 || n[0] != string(faults.ClockJump) {
		t.Errorf("never struck: %v, want clock-jump alone (refused by both)", n)
	}
	if rep.Refused == 0 || rep.Draws == 0 || !rep.Complete {
		t.Errorf("draws %d, refused %d, complete %v: want some of each", rep.Draws, rep.Refused, rep.Complete)
	}
	// The conclusion the report opens on: the answer, the difference with its smallest
	// sale, and the region whose cells show what tells the designs apart.
	cmd := func(s results.Sale) string { return strings.Join(s.Args(), " ") }
	x := rep.Conclusion(cmd)
	if !strings.HasPrefix(x.Answer, "bare is worse than checked: LOCK-BROKEN 10/10 vs 0/10, p=1.1e-05") ||
		len(x.Differences) == 0 || !strings.HasPrefix(x.Differences[0].Smallest, "stockbench run ") {
		t.Errorf("conclusion: %q, differences %+v", x.Answer, x.Differences)
	}
	if g := x.Regions[0]; !strings.HasPrefix(g.Differs, "bare worse by LOCK-BROKEN: p=1.1e-05") || g.Kind != "LOCK-BROKEN" || strings.Join(g.Rates, " ") != "0/10 10/10" {
		t.Errorf("first region: %+v, want the one that differs, LOCK-BROKEN 0/10 against 10/10", g)
	}
	same := run("bare", "bare")
	if d := same.Differences(); len(d) > 0 || same.Designs[1] != "bare (2)" {
		t.Errorf("a design against itself: %q, designs %q", d, same.Designs)
	}
	if x := same.Conclusion(cmd); !strings.HasPrefix(x.Answer, "No design is significantly worse than another here") || len(x.Differences) > 0 {
		t.Errorf("a design against itself: conclusion %q", x.Answer)
	}
	var md strings.Builder
	rep.WriteMarkdown(&md, func(s results.Sale) string { return strings.Join(s.Args(), " ") })
	for _, want := range []string{"## Significant differences", "- bare is worse than checked here: LOCK-BROKEN", "| LOCK-BROKEN |", "## Covered", "## Tried with no finding"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("explore.md lacks %q:\n%s", want, md.String())
		}
	}
}

// TestDrawsAreValid: every drawn sale's faults parse, its sizes are in range, and a
// seed draws the same sales; a mutation changes at most two dimensions.
func TestDrawsAreValid(t *testing.T) {
	for _, kind := range []results.SaleKind{results.LockSale, results.QueueSale} {
		sp := NewSpace(kind, false, nil)
		base := designs("x")[0]
		base.Kind = kind
		a, b := rand.New(rand.NewPCG(7, 1)), rand.New(rand.NewPCG(7, 1))
		for range 500 {
			ga, gb := sp.draw(a), sp.draw(b)
			if !reflect.DeepEqual(ga, gb) {
				t.Fatalf("the same seed drew %v and %v", ga, gb)
			}
			s := sp.apply(base, ga)
			if _, err := faults.Parse(s.Faults); err != nil {
				t.Fatalf("drawn faults %q: %v", s.Faults, err)
			}
			if s.Get("buyers") == "" || s.Get("stock") == "0" || Timing(&s) == "?" {
				t.Fatalf("drawn sale %v: timing %s", s.Settings, Timing(&s))
			}
			if kind == results.LockSale {
				timeout, err := time.ParseDuration(s.Get("timeout"))
				if err != nil || timeout < time.Second || timeout > 40*time.Second {
					t.Fatalf("timeout %s", s.Get("timeout"))
				}
			}
		}
	}
	sp := NewSpace(results.LockSale, false, []faults.Kind{faults.SlowWork})
	if !reflect.DeepEqual(sp.Faults, []faults.Kind{faults.SlowWork}) {
		t.Errorf("--faults slow-work: space %v", sp.Faults)
	}
}

// TestSearchDrawsTheSameForTheSameOutcomes: sales that end in another order (each
// sleeps a random while) leave a seed's draws as they were: a draw is drawn from what
// the draws at least a window before it found, absorbed in the order drawn. A search
// that found nothing would draw the same with any rule, so the fake finds.
func TestSearchDrawsTheSameForTheSameOutcomes(t *testing.T) {
	search := func(start int) []gene {
		jittery := func(ctx context.Context, s results.Sale, slot int) (results.Run, error) {
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
			return fake(ctx, s, slot)
		}
		cfg := withDefaults(Config{Designs: designs("checked", "bare"), Space: NewSpace(results.LockSale, false, nil), Parallel: 8, Run: jittery})
		x, cancel := newExplorer(context.Background(), cfg)
		defer cancel()
		// However many sales the load lets run at once, the draws are the same.
		x.lim = newLimiter(start, len(cfg.Designs), cfg.Parallel)
		until := time.Now().Add(400 * time.Millisecond)
		x.search(context.Background(), until, until)
		if len(x.corpus) == 0 {
			t.Fatal("the search found nothing to mutate")
		}
		return x.drawn
	}
	a, b := search(8), search(2)
	n := min(len(a), len(b))
	if n < 50 {
		t.Fatalf("%d and %d draws: too few to compare", len(a), len(b))
	}
	for i := range n {
		if !reflect.DeepEqual(a[i], b[i]) {
			t.Fatalf("draw %d of %d differs between two searches of one seed:\n%+v\n%+v", i, n, a[i], b[i])
		}
	}
}

// TestFineDrawsKeepTheTimings: a whole-second space draws a TTL of one second; a space
// whose designs keep milliseconds draws 200, 400 or 600 ms, with the work and the faults'
// lengths the same shares of it, so the timing relation is the coarse draw's, and the
// retry interval a fifth (1 ms at least). At 200 ms the whole sale is the coarse one a
// fifth as long: its stock, its patience too.
func TestFineDrawsKeepTheTimings(t *testing.T) {
	coarse := NewSpace(results.LockSale, false, nil)
	fine := coarse
	fine.Fine = true
	base := designs("x")[0]
	r := rand.New(rand.NewPCG(3, 3))
	dur := func(s results.Sale, k string) time.Duration {
		d, err := time.ParseDuration(s.Get(k))
		if err != nil {
			t.Fatalf("%s=%q: %v", k, s.Get(k), err)
		}
		return d
	}
	near := func(a, b time.Duration) bool { return a-b <= 20*time.Millisecond && b-a <= 20*time.Millisecond }
	for range 500 {
		g := coarse.draw(r)
		c, f := coarse.apply(base, g), fine.apply(base, g)
		ct, ft := dur(c, "ttl"), dur(f, "ttl")
		if ct != time.Second || !slices.Contains(fineTTLs, ft) {
			t.Fatalf("ttl %s coarse, %s fine: want 1s and one of %v", ct, ft, fineTTLs)
		}
		k := float64(ct) / float64(ft)
		if Timing(&c) != Timing(&f) || c.Get("buyers") != f.Get("buyers") {
			t.Fatalf("coarse %v and fine %v differ in more than their times", c.Settings, f.Settings)
		}
		cp, _ := faults.Parse(c.Faults)
		fp, _ := faults.Parse(f.Faults)
		for i := range cp {
			if !near(time.Duration(float64(fp[i].For)*k), cp[i].For) || !near(time.Duration(float64(fp[i].By)*k), cp[i].By) {
				t.Fatalf("faults %s coarse, %s fine: want their lengths the same shares of the TTL", c.Faults, f.Faults)
			}
		}
		if ri := dur(f, "retry-interval"); ri != max(dur(c, "retry-interval")/5, time.Millisecond) {
			t.Fatalf("retry interval %s fine, %s coarse: want a fifth, 1ms at least", ri, c.Get("retry-interval"))
		}
		if ft == 200*time.Millisecond && (c.Get("stock") != f.Get("stock") || !near(dur(c, "timeout")/5, dur(f, "timeout"))) {
			t.Fatalf("at 200ms, coarse %v and fine %v: want the sale a fifth as long", c.Settings, f.Settings)
		}
	}
}

// TestHolm checks the correction against a hand computation.
func TestHolm(t *testing.T) {
	cs := []*Comparison{{P: 0.01}, {P: 0.04}, {P: 0.03}, {P: 0.005}}
	holm(cs)
	// Sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1 -> 0.06 (monotone).
	want := []float64{0.02, 0.03, 0.06, 0.06}
	for i, c := range cs {
		if d := c.Adjusted - want[i]; d > 1e-12 || d < -1e-12 {
			t.Errorf("adjusted[%d] = %v, want %v", i, c.Adjusted, want[i])
		}
	}
	if !cs[0].Significant || !cs[1].Significant || cs[2].Significant {
		t.Errorf("significance: %v %v %v", cs[0].Significant, cs[1].Significant, cs[2].Significant)
	}
}

// TestInterruptedKeepsWhatWasFound: a context ended mid-search still gives a report,
// marked incomplete.
func TestInterruptedKeepsWhatWasFound(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	slow := func(c context.Context, s results.Sale, slot int) (results.Run, error) {
		if n++; n > 40 {
			cancel()
		}
		return fake(c, s, slot)
	}
	rep, err := Explore(ctx, Config{Designs: designs("bare"), Space: NewSpace(results.LockSale, false, nil), Budget: time.Minute, Parallel: 1, Run: slow})
	if err != nil || rep.Complete || rep.Draws == 0 {
		t.Fatalf("err %v, complete %v, draws %d", err, rep.Complete, rep.Draws)
	}
	if _, err := Explore(ctx, Config{Run: slow}); err == nil || !errors.Is(err, err) {
		t.Errorf("no design: want an error")
	}
}

// TestTheSearchTakesItsHalf: where every draw finds something and the sales are slow
// to rerun, the search still takes half the budget (measuring what it reached could
// take it all), and settling measures the most promising regions first.
func TestTheSearchTakesItsHalf(t *testing.T) {
	overlaps := func(ctx context.Context, s results.Sale, slot int) (results.Run, error) {
		time.Sleep(40 * time.Millisecond)
		run, err := fake(ctx, s, slot)
		if err == nil && run.Verdict.Class == oracle.ClassSafe {
			run.Verdict = oracle.Verdict{Class: oracle.ClassOverlap, Count: 1, Findings: []string{"OVERLAP 1"}}
		}
		return run, err
	}
	const budget = 4 * time.Second
	rep, err := Explore(context.Background(), Config{Designs: designs("checked", "bare"), Space: NewSpace(results.LockSale, false, nil),
		Budget: budget, Parallel: 4, Confirm: 4, Run: overlaps, Idle: func() (float64, bool) { return 0.5, true }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Searched < budget/2 || rep.Searched > budget*3/4+time.Second {
		t.Errorf("the search took %s of %s: want half to three quarters", rep.Searched, budget)
	}
	if len(rep.Findings) < 2 {
		t.Fatalf("%d regions: want several, for the order", len(rep.Findings))
	}
	// Findings are reported in the order settled: the first most promising, and measured.
	if f := rep.Findings[0]; len(f.Rates) != 2 || f.Rates[0].Runs == 0 || f.Rates[1].Runs == 0 {
		t.Errorf("%s, %s: the most promising region not measured", f.Faults, f.Timing)
	}
}

// TestEveryFaultStrikes: a search whose share of the budget is over before every fault
// of the space has struck in MinStrikes draws goes on until each has, and says so; a
// fault a design refuses is not waited for. Given no time at all, it stops at its most.
func TestEveryFaultStrikes(t *testing.T) {
	space := NewSpace(results.LockSale, false, []faults.Kind{faults.ClientPause, faults.SlowWork, faults.RedisPause, faults.ClockJump})
	search := func(most time.Duration) (*explorer, string) {
		var last string
		cfg := withDefaults(Config{Designs: designs("checked", "bare"), Space: space, Parallel: 2, Run: fake,
			Progress: func(l string) { last = l }})
		x, cancel := newExplorer(context.Background(), cfg)
		defer cancel()
		now := time.Now()
		x.search(context.Background(), now, now.Add(most))
		return x, last
	}
	x, end := search(time.Minute)
	for _, k := range space.Faults {
		if k == faults.ClockJump { // refused by both designs
			continue
		}
		if n := x.struck[k]; n < MinStrikes {
			t.Errorf("%s struck in %d draws: want %d", k, n, MinStrikes)
		}
	}
	if !x.refused[faults.ClockJump] || !strings.HasSuffix(end, fmt.Sprintf("the search went on past its half until every fault struck in %d draws", MinStrikes)) {
		t.Errorf("want the search gone on for the faults, clock-jump passed over, got %q", end)
	}
	if _, end := search(0); !strings.Contains(end, "the search stops at its most, ") || !strings.HasSuffix(end, fmt.Sprintf("struck in 0 draws of the %d wanted", MinStrikes)) {
		t.Errorf("given no time, want the search's stop said, got %q", end)
	}
}

// TestTheSearchSaysItsEnd: a search too short for its periodic progress line (fewer
// draws absorbed than a line waits for, as on a slow machine) still says where it ended
// before settling begins.
func TestTheSearchSaysItsEnd(t *testing.T) {
	slow := func(ctx context.Context, s results.Sale, slot int) (results.Run, error) {
		time.Sleep(200 * time.Millisecond)
		run, err := fake(ctx, s, slot)
		run.Verdict = oracle.Verdict{Class: oracle.ClassSafe} // nothing found: no region cuts the search short
		return run, err
	}
	var lines []string
	var mu sync.Mutex
	_, err := Explore(context.Background(), Config{Designs: designs("checked", "bare"), Space: NewSpace(results.LockSale, false, nil),
		Budget: time.Second, Parallel: 2, Run: slow, Progress: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(lines, func(l string) bool {
		return strings.HasPrefix(l, "explore: searching") && (strings.HasSuffix(l, "the search's share of the budget is spent") ||
			strings.Contains(l, "; the search stops at its most") || strings.Contains(l, "; the search went on past its half"))
	}) {
		t.Errorf("want the search's end said, got %q", lines)
	}
}

// TestPaceIsNoRegion: where every sale leaves stock as sales go on until the buyers'
// patience runs out (as a busy machine leaves it, on any design), that is no finding:
// no region is made of it nor measured, and the report lists it apart; where the sales
// stopped well before the buyers gave up (a lock that kept them out), it stays a finding.
func TestPaceIsNoRegion(t *testing.T) {
	unsold := func(last time.Duration) func(context.Context, results.Sale, int) (results.Run, error) {
		return func(ctx context.Context, s results.Sale, slot int) (results.Run, error) {
			run, err := fake(ctx, s, slot)
			if err == nil && run.Verdict.Class == oracle.ClassSafe {
				run.Kind = results.LockSale
				run.Params.RetryTimeout = "1s"
				run.Oracle = oracle.Report{Bought: 20, Unsold: 10, LastSale: last}
				run.Verdict = oracle.Verdict{Class: oracle.ClassStuck, Count: 10, Findings: []string{"UNSOLD 10 (GAVE-UP 70)"}}
			}
			return run, err
		}
	}
	explore := func(run func(context.Context, results.Sale, int) (results.Run, error)) *Report {
		space := NewSpace(results.LockSale, false, nil)
		space.Faults = []faults.Kind{faults.ClientPause} // no timing past the TTL: the fake finds nothing else
		rep, err := Explore(context.Background(), Config{Designs: designs("checked", "bare"), Space: space, Budget: time.Second, Parallel: 4, Run: run})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := explore(unsold(950 * time.Millisecond)) // sold until 50 ms before the buyers gave up
	for _, f := range rep.Findings {
		if f.Seen["UNSOLD"] != nil {
			t.Errorf("a region was made of the sales' pace: %s, %s %v", f.Faults, f.Timing, f.Kinds())
		}
	}
	var md strings.Builder
	rep.WriteMarkdown(&md, func(s results.Sale) string { return strings.Join(s.Args(), " ") })
	if p := rep.Paced(); len(p) == 0 || !strings.HasPrefix(p[0], "UNSOLD ") || !strings.Contains(md.String(), "## Left apart: the sales' own pace") {
		t.Errorf("the report should list the sales' pace apart: %q\n%s", p, md.String())
	}
	kept := explore(unsold(100 * time.Millisecond)) // the sales stopped 900 ms before the buyers gave up
	if !slices.ContainsFunc(kept.Findings, func(f *Finding) bool { return f.Seen["UNSOLD"] != nil }) || len(kept.Paced()) > 0 {
		t.Errorf("stock left while buyers still waited is a finding: regions %d, paced %q", len(kept.Findings), kept.Paced())
	}
}

// TestLeftOverGoesBackToTheSearch: where the regions settle quickly, the exploration does
// not end early: the time left over goes back to the search, half of it, and what that
// finds is settled in the rest, the regions settled before kept as they were.
func TestLeftOverGoesBackToTheSearch(t *testing.T) {
	// One region breaks (redis-pause alone, whatever the timing): its shrink and reruns
	// are soon done.
	quick := func(ctx context.Context, s results.Sale, slot int) (results.Run, error) {
		time.Sleep(5 * time.Millisecond)
		run := results.Run{Complete: true, Verdict: oracle.Verdict{Class: oracle.ClassSafe}, Params: results.Params{Seed: s.Seed()}}
		if s.Faults == "redis-pause" && s.Design == "bare" {
			run.Verdict = oracle.Verdict{Class: oracle.ClassBroken, Count: 1, Findings: []string{"LOCK-BROKEN 1"}}
		}
		return run, ctx.Err()
	}
	const budget = 3 * time.Second
	var lines []string
	var mu sync.Mutex
	rep, err := Explore(context.Background(), Config{Designs: designs("checked", "bare"), Space: NewSpace(results.LockSale, false, nil),
		Budget: budget, Parallel: 4, Confirm: 2, Tries: 1, Run: quick, Idle: func() (float64, bool) { return 0.5, true },
		Progress: func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Resumed == 0 || rep.Searched <= budget/2 {
		for _, f := range rep.Findings {
			t.Logf("%s %s shrink sales %d shrunk %v", f.Faults, f.Timing, f.ShrinkSales, f.Shrunk)
		}
		for _, tm := range rep.Time {
			t.Logf("%+v", tm)
		}
		t.Fatalf("searched %s in %d resumed rounds: want the time left over searched", rep.Searched, rep.Resumed)
	}
	if rep.Elapsed < budget*3/4 {
		t.Errorf("the exploration ended after %s of its %s", rep.Elapsed, budget)
	}
	said := strings.Join(lines, "\n")
	if !strings.Contains(said, "left over: searching again for half of it") || !strings.Contains(said, "its half of the time left over is spent") {
		t.Errorf("the resumed search unsaid:\n%s", said)
	}
	var b strings.Builder
	rep.writeTime(&b)
	if !strings.Contains(b.String(), "the search resumed") {
		t.Errorf("explore.md's time section does not say the search resumed:\n%s", b.String())
	}
	for _, f := range rep.Findings {
		if f.Rates == nil {
			t.Errorf("%s, %s: not settled", f.Faults, f.Timing)
		}
	}
}

// The stop rule learns what reruns cost: a region's rerun is estimated at its first
// sale's time (or the mean sale's, if longer) until learnFrom reruns have ended, then at
// that times what they took against their estimates, within bounds.
func TestSettlingLearnsTheRerunsCost(t *testing.T) {
	x, cancel := newExplorer(context.Background(), withDefaults(Config{Designs: designs("checked", "bare"), Run: fake, Confirm: 10}))
	defer cancel()
	x.clock.sale(Searching, time.Second, results.Spent{Selling: time.Second})
	fd := &Finding{FirstRun: results.Run{Spent: results.Spent{Selling: 2 * time.Second}}}
	if got := x.rerunEstimate(fd); got != 2*time.Second {
		t.Fatalf("before any rerun: %s, want the first sale's 2s", got)
	}
	if quick := (&Finding{FirstRun: results.Run{Spent: results.Spent{Selling: time.Millisecond}}}); x.rerunEstimate(quick) != time.Second {
		t.Errorf("a first sale shorter than the mean: %s, want the mean's 1s", x.rerunEstimate(quick))
	}
	for range learnFrom - 1 {
		x.learnt.add(6*time.Second, 2*time.Second)
	}
	if got := x.rerunEstimate(fd); got != 2*time.Second {
		t.Errorf("after %d reruns: %s, want 2s still: the ratio waits for %d", learnFrom-1, got, learnFrom)
	}
	x.learnt.add(6*time.Second, 2*time.Second)
	if got := x.rerunEstimate(fd); got != 6*time.Second {
		t.Errorf("reruns took 3 times their estimate: %s, want 6s", got)
	}
	for range 100 {
		x.learnt.add(time.Hour, time.Second)
	}
	if f := x.learnt.factor(); f != factorHigh {
		t.Errorf("factor %.2f, want it bounded at %.0f", f, factorHigh)
	}
}
