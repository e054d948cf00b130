package gate

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// gateRun is a hand-made run: impl under faults, with sales/s, a p99 and p99.9 in µs,
// n sales, and the damage and documented classes given.
type gateRun struct {
	impl, faults    string
	sales           float64
	p99, p999       int64
	n               int64
	oversold, overl int64
	expected        []oracle.Class
	incomplete      bool
	unfired         []string
	// p50s, when set, are the medians (µs) of as many runs of the sale (its Spread),
	// each with sales as its sales/s scaled by the first p50 over it.
	p50s []int64
}

func (g gateRun) run() results.Run {
	rep := oracle.Report{Oversold: g.oversold, Overlaps: int(g.overl), Bought: 30, InitialStock: 30}
	r := results.Run{Kind: "lock", Scenario: "flash-sale", Impl: g.impl, Complete: !g.incomplete,
		Params: results.Params{Faults: g.faults}, Oracle: rep, Verdict: rep.Outcome(),
		SalesPerSec: g.sales, Expected: g.expected,
		Latency: map[string]results.Latency{"purchase": {Count: g.n, P99Us: g.p99, P999Us: g.p999}}}
	if g.faults == "none" {
		r.Params.Faults = ""
	}
	if len(g.unfired) > 0 {
		r.Judge(rep.Outcome(), g.unfired, g.expected)
	}
	if len(g.p50s) > 0 {
		r.Spread = &results.Spread{}
		for _, p := range g.p50s {
			r.Spread.P50Us = append(r.Spread.P50Us, p)
			r.Spread.SalesPerSec = append(r.Spread.SalesPerSec, g.sales*float64(g.p50s[0])/float64(p))
		}
		l := r.Latency["purchase"]
		l.P50Us = g.p50s[0]
		r.Latency["purchase"] = l
	}
	return r
}

func gateFile(runs ...gateRun) *results.File {
	f := &results.File{SchemaVersion: results.SchemaVersion, ID: "f", Complete: true}
	for _, g := range runs {
		f.Runs = append(f.Runs, g.run())
	}
	return f
}

var safe = []oracle.Class{oracle.ClassSafe}

// ref and nx are the reference and a design under test, 1,000 sales each.
func ref(sales float64, p99 int64) gateRun {
	return gateRun{impl: "lua", faults: "none", sales: sales, p99: p99, p999: 2 * p99, n: 1000, expected: safe}
}

func nx(sales float64, p99 int64) gateRun {
	return gateRun{impl: "set-nx-ex", faults: "none", sales: sales, p99: p99, p999: 2 * p99, n: 1000, expected: safe}
}

func TestGate(t *testing.T) {
	base := gateFile(ref(10000, 1000), nx(1000, 10000))
	absolute := Defaults
	absolute.Reference = ""
	withFaults := Defaults
	withFaults.SoftUnderFaults = true
	ignoring := Defaults
	ignoring.Ignore = []string{"*/set-nx-ex/*"}
	oversold := nx(1000, 10000)
	oversold.oversold = 2
	overlapNoDoc := nx(1000, 10000)
	overlapNoDoc.expected, overlapNoDoc.overl = nil, 3
	overlapDocumented := overlapNoDoc
	overlapDocumented.expected = []oracle.Class{oracle.ClassOversold}
	unfinished := nx(1000, 10000)
	unfinished.incomplete = true
	few := nx(100, 90000)
	few.n = 50
	faulted := func(g gateRun) gateRun { g.faults = "client-pause"; return g }
	unfired := faulted(nx(1000, 10000))
	unfired.faults, unfired.unfired = "slow-work:nth=99999", []string{"slow-work"}
	unfiredDocumented := unfired
	unfiredDocumented.impl, unfiredDocumented.expected = "lua", []oracle.Class{oracle.ClassNotExercised}
	// A race: the baseline's sale earned nothing, but its reruns earned an overlap too.
	racyBase := gateFile(ref(10000, 1000), nx(1000, 10000))
	racyBase.Runs[1].Repeats = &results.Repeats{Times: 10, Same: 7, Classes: map[oracle.Class]int{oracle.ClassSafe: 7, oracle.ClassOverlap: 3}}
	oversoldNoDoc := overlapNoDoc
	oversoldNoDoc.oversold = 1

	tests := []struct {
		name     string
		base     *results.File
		current  *results.File
		rules    Rules
		want     []string // each in some regression; none wanted when empty
		wantNone bool
	}{
		{"same figures pass", base, gateFile(ref(10000, 1000), nx(1000, 10000)), Defaults, nil, true},
		{"oversold where documented SAFE", base, gateFile(ref(10000, 1000), oversold), Defaults,
			[]string{"flash-sale/set-nx-ex/none: OVERSOLD 2 where the design is documented SAFE"}, false},
		{"overlap where the baseline had none", base, gateFile(ref(10000, 1000), overlapNoDoc), Defaults,
			[]string{"OVERLAP 3 where the baseline had none"}, false},
		{"overlap the documentation admits", base, gateFile(ref(10000, 1000), overlapDocumented), Defaults, nil, true},
		{"overlap the baseline's reruns showed", racyBase, gateFile(ref(10000, 1000), overlapNoDoc), Defaults, nil, true},
		{"worse than the baseline's reruns showed", racyBase, gateFile(ref(10000, 1000), oversoldNoDoc), Defaults,
			[]string{"OVERSOLD 1 where the baseline had none"}, false},
		{"a sale that did not finish", base, gateFile(ref(10000, 1000), unfinished), Defaults,
			[]string{"set-nx-ex/none: the sale did not finish"}, false},
		{"a run gone missing", base, gateFile(ref(10000, 1000)), Defaults,
			[]string{"flash-sale/set-nx-ex/none: in the baseline but not in this run"}, false},
		{"ignored runs are not gated", base, gateFile(ref(10000, 1000), oversold), ignoring, nil, true},
		{"throughput down exactly the tolerance", base, gateFile(ref(10000, 1000), nx(700, 10000)), Defaults, nil, true},
		{"throughput down past the tolerance", base, gateFile(ref(10000, 1000), nx(690, 10000)), Defaults,
			[]string{"sales/s 690 (0.069× lua) vs baseline 1000 (0.1× lua): -31%, tolerance -30%"}, false},
		{"a slower runner moves the reference too", base, gateFile(ref(5000, 2000), nx(500, 20000)), Defaults, nil, true},
		{"absolute figures see the slower runner", base, gateFile(ref(5000, 2000), nx(500, 20000)), absolute,
			[]string{"set-nx-ex/none: sales/s 500", "set-nx-ex/none: p99 20.0ms", "lua/none: sales/s 5000"}, false},
		{"p99 up exactly the tolerance", base, gateFile(ref(10000, 1000), nx(1000, 15000)), Defaults, nil, true},
		{"p99 up past the tolerance", base, gateFile(ref(10000, 1000), nx(1000, 15100)), Defaults,
			[]string{"p99 15.1ms (15.1× lua) vs baseline 10.0ms (10× lua): +51%, tolerance +50%"}, false},
		{"too few sales are not soft-gated", gateFile(ref(10000, 1000), few), gateFile(ref(10000, 1000), func() gateRun { g := few; g.sales = 1; return g }()), Defaults, nil, true},
		{"a fault that never struck", base, gateFile(ref(10000, 1000), nx(1000, 10000), unfired), Defaults,
			[]string{"flash-sale/set-nx-ex/slow-work:nth=99999: slow-work never struck, so the sale says nothing about it (NOT-EXERCISED slow-work)"}, false},
		{"a fault the design documents it takes no part in", base, gateFile(ref(10000, 1000), nx(1000, 10000), unfiredDocumented), Defaults, nil, true},
		{"fault runs are not soft-gated by default", gateFile(ref(10000, 1000), faulted(nx(1000, 10000))),
			gateFile(ref(10000, 1000), faulted(nx(100, 10000))), Defaults, nil, true},
		{"unless asked", gateFile(ref(10000, 1000), faulted(ref(10000, 1000)), faulted(nx(1000, 10000))),
			gateFile(ref(10000, 1000), faulted(ref(10000, 1000)), faulted(nx(100, 10000))), withFaults,
			[]string{"flash-sale/set-nx-ex/client-pause: sales/s 100"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Compare(tt.base, tt.current, tt.rules)
			got := strings.Join(res.Regressions, "\n")
			if tt.wantNone && !res.Passed() {
				t.Fatalf("want a pass, got:\n%s", got)
			}
			if !tt.wantNone && res.Passed() {
				t.Fatalf("want a regression, got a pass (notes: %v)", res.Notes)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("want a regression containing %q, got:\n%s", w, got)
				}
			}
		})
	}
}

// spread gives g five runs: p50s in µs, and sales/s as a closed sale's that many buyers
// over them.
func spread(g gateRun, p50s ...int64) gateRun {
	g.p50s = p50s
	return g
}

// TestSoftTest: with several runs a side, a change fails only when it is larger than the
// effect and every run or all but one on one side lies beyond the other's; the
// reference's median scales both; a side run once is left to the tolerances.
func TestSoftTest(t *testing.T) {
	same := []int64{1000, 1100, 900, 1050, 950}
	base := gateFile(spread(ref(10000, 1000), 100, 110, 90, 105, 95), spread(nx(1000, 10000), same...))
	tests := []struct {
		name    string
		current *results.File
		want    string // "" for a pass
	}{
		{"the same spread passes", gateFile(spread(ref(10000, 1000), 100, 105, 95, 110, 90), spread(nx(1000, 10000), 1020, 980, 1090, 940, 1000)), ""},
		{"a run far off among the others passes", gateFile(spread(ref(10000, 1000), 100, 105, 95, 110, 90), spread(nx(1000, 10000), 1000, 1100, 950, 2500, 1020)), ""},
		{"every run 50% slower fails", gateFile(spread(ref(10000, 1000), 100, 105, 95, 110, 90), spread(nx(1000, 10000), 1500, 1650, 1350, 1575, 1425)),
			"flash-sale/set-nx-ex/none: p50 1.50ms (15× lua) vs baseline 1.00ms (10× lua), medians of 5 and 5 runs: +50%, beyond the 20% effect; Mann-Whitney p=0.00397"},
		{"every run 10% slower is below the effect", gateFile(spread(ref(10000, 1000), 100, 105, 95, 110, 90), spread(nx(1000, 10000), 1100, 1210, 990, 1155, 1045)), ""},
		{"a slower runner slows the reference too", gateFile(spread(ref(10000, 1000), 200, 210, 190, 220, 180), spread(nx(1000, 10000), 2000, 2200, 1800, 2100, 1900)), ""},
		{"sales/s down by half fails", gateFile(spread(ref(10000, 1000), 100, 105, 95, 110, 90), spread(nx(500, 10000), same...)),
			"sales/s 500 (0.05× lua) vs baseline 1000 (0.1× lua), medians of 5 and 5 runs: -50%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Compare(base, tt.current, Defaults)
			got := strings.Join(res.Regressions, "\n")
			switch {
			case tt.want == "" && !res.Passed():
				t.Errorf("want a pass, got:\n%s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("want a regression containing %q, got:\n%s", tt.want, got)
			}
		})
	}
	// Run once on a side: the tolerances judge, and a note says so.
	res := Compare(gateFile(ref(10000, 1000), nx(1000, 10000)), gateFile(spread(ref(10000, 1000), 100, 105, 95), spread(nx(1000, 12000), 1500, 1600, 1400)), Defaults)
	if !res.Passed() || !strings.Contains(strings.Join(res.Notes, "\n"), "set-nx-ex/none: run once on a side (no --repeat spread); the tolerances judge its speed") {
		t.Errorf("one side without a spread: %v %v", res.Regressions, res.Notes)
	}
	// The tolerance rules, asked for, ignore the spread.
	tol := Defaults
	tol.Soft = SoftTolerance
	if res := Compare(base, gateFile(spread(ref(10000, 1000), 100, 105, 95, 110, 90), spread(nx(1000, 16000), 1000, 1100, 900, 1050, 950)), tol); res.Passed() {
		t.Error("soft: tolerance passed a p99 60% up")
	}
}

func TestReadGateRules(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	g, err := ReadRules(write("partial.json", `{"max_p99_rise": 0.8, "ignore": ["*/redlock/*"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if g.MaxP99Rise != 0.8 || g.Reference != "lua" || g.MaxThroughputDrop != Defaults.MaxThroughputDrop || len(g.Ignore) != 1 {
		t.Errorf("a partial file keeps the other defaults: %+v", g)
	}
	for name, body := range map[string]string{
		"unknown.json":  `{"max_p99": 0.8}`,
		"negative.json": `{"max_p999_rise": -1}`,
		"drop.json":     `{"max_throughput_drop": 1.5}`,
		"pattern.json":  `{"ignore": ["[x"]}`,
		"garbage.json":  `max_p99_rise = 1`,
		"soft.json":     `{"soft": "vibes"}`,
		"alpha.json":    `{"alpha": 0}`,
		"effect.json":   `{"min_effect": 1}`,
	} {
		if _, err := ReadRules(write(name, body)); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if _, err := ReadRules(filepath.Join(dir, "absent.json")); err == nil {
		t.Error("a missing gate file: want an error")
	}
}

func TestSlim(t *testing.T) {
	f := gateFile(ref(10000, 1000), nx(1000, 10000))
	rec := results.NewRecorder(1)
	for i := range 500 {
		rec.Record(0, results.Purchase, time.Duration(100+i*10)*time.Microsecond)
	}
	full, err := results.Summarize(rec.Histogram(results.Purchase))
	if err != nil {
		t.Fatal(err)
	}
	f.Runs[0].Latency["purchase"] = full
	f.Runs[0].Sales = []results.Sample{{At: time.Second, N: 10}}
	s := results.Slim(f)
	l := s.Runs[0].Latency["purchase"]
	if l.Hist != "" || s.Runs[0].Sales != nil {
		t.Error("Slim kept a histogram or a timeline")
	}
	if l.Count != 500 || l.P99Us == 0 {
		t.Errorf("Slim lost the summary the gate reads: %+v", l)
	}
	if f.Runs[0].Latency["purchase"].Hist == "" || f.Runs[0].Sales == nil {
		t.Error("Slim changed its argument")
	}
	if res := Compare(f, s, Defaults); !res.Passed() {
		t.Errorf("a run gated against its slimmed self: %v", res.Regressions)
	}
}

// TestRateGate: between sales run with several seeds, a kind of finding that rose
// significantly is a regression (a lock that broke in 8 draws of 10 where it broke in
// none); a rise chance explains (1 of 10 where it was 0 of 10) is not, and a baseline
// whose draws earned a class admits it in a single draw.
func TestRateGate(t *testing.T) {
	draws := func(broken, of int) *results.Draws {
		d := &results.Draws{}
		for i := range of {
			run := results.Run{Params: results.Params{Seed: uint64(i)}, Verdict: oracle.Verdict{Class: oracle.ClassSafe}}
			if i < broken {
				run.Verdict = oracle.Verdict{Class: oracle.ClassBroken, Count: 1, Findings: []string{"LOCK-BROKEN 1"}}
			}
			d.Add(&run)
		}
		return d
	}
	for _, tc := range []struct {
		cur, base int
		want      string // in the regression; "" for none
	}{
		{8, 0, "LOCK-BROKEN in 8 of 10 draws, the baseline's 0 of 10 (Fisher's exact test, p=0.00071)"},
		{1, 0, ""},
		{3, 3, ""},
		{0, 8, ""},
	} {
		base, cur := gateFile(gateRun{impl: "token", faults: "slow-work", n: 30}), gateFile(gateRun{impl: "token", faults: "slow-work", n: 30})
		base.Runs[0].Draws, cur.Runs[0].Draws = draws(tc.base, 10), draws(tc.cur, 10)
		regs := strings.Join(rateGates("k", &cur.Runs[0], &base.Runs[0]), "\n")
		if (tc.want == "") != (regs == "") || !strings.Contains(regs, tc.want) {
			t.Errorf("%d of 10 against %d of 10: regressions %q, want %q", tc.cur, tc.base, regs, tc.want)
		}
	}
	b := gateRun{impl: "token", faults: "slow-work", n: 30}.run()
	b.Draws = draws(2, 10)
	if got := rerun(&b); !slices.Contains(got, oracle.ClassBroken) {
		t.Errorf("the baseline's draws admit %v, want LOCK-BROKEN among them", got)
	}
}

// TestGateSpeedOnAnotherMachine: a baseline recorded on another CPU, or against another
// Redis, holds the run's classes but not its speed: a slower run there is a note, a harm
// still a regression.
func TestGateSpeedOnAnotherMachine(t *testing.T) {
	slow := gateFile(ref(10000, 1000), nx(500, 10000))
	oversold := nx(1000, 10000)
	oversold.oversold = 2
	for _, tc := range []struct {
		name       string
		base       func(*results.File)
		regression string // "" for none
		note       string
	}{
		{"the same machine: the speed gate holds", func(*results.File) {}, "sales/s 500", ""},
		{"another CPU", func(f *results.File) { f.Host.CPUModel = "another" }, "", `CPU "another", here ""`},
		{"more CPUs", func(f *results.File) { f.Host.CPUs = 64 }, "", "64 CPUs, here 0"},
		{"another Redis", func(f *results.File) { f.Target = results.Target{Kind: "container", Version: "7.2.4"} }, "", "Redis container 7.2.4, here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := gateFile(ref(10000, 1000), nx(1000, 10000))
			tc.base(base)
			res := Compare(base, slow, Defaults)
			if got := strings.Join(res.Regressions, "\n"); tc.regression == "" && got != "" || !strings.Contains(got, tc.regression) {
				t.Errorf("regressions %q, want %q", got, tc.regression)
			}
			if notes := strings.Join(res.Notes, "\n"); tc.note != "" && (!strings.Contains(notes, tc.note) || !strings.Contains(notes, "for information: flash-sale/set-nx-ex/none: sales/s 500")) {
				t.Errorf("notes %q, want %q and the speed row for information", notes, tc.note)
			}
			if harm := Compare(base, gateFile(ref(10000, 1000), oversold), Defaults); !strings.Contains(strings.Join(harm.Regressions, "\n"), "OVERSOLD 2") {
				t.Errorf("a harm on another machine passed: %v", harm.Regressions)
			}
		})
	}
}

// TestPacedStock: stock left unsold under a fault while sales went on until the buyers'
// patience ran out, with no lock left behind, is the machine's pace, a note; stock left
// because sales stopped early, a lock left alive, or nothing sold at all stays a
// regression.
func TestPacedStock(t *testing.T) {
	sale := func(change func(*results.Run)) *results.File {
		r := results.Run{Kind: results.LockSale, Scenario: "headline", Impl: "watch", Complete: true,
			Params:   results.Params{Faults: "client-pause:p=0.01:dist=exp", RetryTimeout: "2s"},
			Oracle:   oracle.Report{Bought: 1000, InitialStock: 1000, LastSale: 1500 * time.Millisecond},
			Duration: 2200 * time.Millisecond}
		if change != nil {
			change(&r)
		}
		r.Verdict = r.Oracle.Outcome()
		return &results.File{SchemaVersion: results.SchemaVersion, ID: "f", Complete: true, Runs: []results.Run{r}}
	}
	unsold := func(last time.Duration) func(*results.Run) {
		return func(r *results.Run) { r.Oracle.Bought, r.Oracle.Unsold, r.Oracle.LastSale = 700, 300, last }
	}
	for _, tc := range []struct {
		name   string
		change func(*results.Run)
		note   bool // a note, no regression
	}{
		{"sales to the end of the buyers' patience", unsold(2020 * time.Millisecond), true},
		{"within a quarter of the patience of its end", unsold(1510 * time.Millisecond), true},
		{"to its end, the clean-up after it long", func(r *results.Run) { unsold(2030 * time.Millisecond)(r); r.Duration = 2800 * time.Millisecond }, true},
		{"sales stopped early", unsold(1400 * time.Millisecond), false},
		{"an open load: the last buyer arrived at 2s", func(r *results.Run) {
			unsold(3900 * time.Millisecond)(r)
			r.Params.Rate, r.Params.Buyers = 1000, 2001
		}, true},
		{"an open load: sales stopped when the first buyers gave up", func(r *results.Run) {
			unsold(2020 * time.Millisecond)(r)
			r.Params.Rate, r.Params.Buyers = 1000, 2001
		}, false},
		{"a lock left alive", func(r *results.Run) { unsold(2020 * time.Millisecond)(r); r.Oracle.Stuck = true }, false},
		{"a zombie lock", func(r *results.Run) { unsold(2020 * time.Millisecond)(r); r.Oracle.Zombie = true }, false},
		{"nothing sold", func(r *results.Run) { unsold(0)(r); r.Oracle.Bought, r.Oracle.Unsold = 0, 1000 }, false},
		{"no fault", func(r *results.Run) { unsold(2020 * time.Millisecond)(r); r.Params.Faults = "" }, false},
		{"a queue sale", func(r *results.Run) { unsold(2020 * time.Millisecond)(r); r.Kind = results.QueueSale }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := Compare(sale(nil), sale(tc.change), Defaults)
			noted := slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "the machine's pace") })
			if tc.note != (res.Passed() && noted) {
				t.Errorf("want note %v; regressions %q, notes %q", tc.note, res.Regressions, res.Notes)
			}
		})
	}
}

// A sale documented SAFE that oversold after a holder outlived its lease in its own
// round trips did so at the machine's pace (results.Run.Outpaced): a note; through a
// broken lock first, a regression.
func TestOutpacedIsANote(t *testing.T) {
	ms := time.Millisecond
	sale := func(class oracle.Class) *results.File {
		r := results.Run{Kind: results.LockSale, Scenario: "flash-sale", Impl: "set-nx-ex", Complete: true,
			Params: results.Params{Faults: "net-latency", RetryTimeout: "10s"}, Expected: safe,
			Oracle: oracle.Report{Bought: 30, InitialStock: 30, LastSale: 900 * ms}}
		if class != oracle.ClassSafe {
			r.Oracle.Bought, r.Oracle.Oversold, r.Oracle.Overlaps, r.Oracle.LockBroken = 31, 1, 2, 1
			r.Oracle.Earliest = &oracle.Violation{Class: class, At: 1005 * ms,
				First:  oracle.Hold{Buyer: 4, Enter: ms, Leave: 1300 * ms, Lease: time.Second},
				Second: oracle.Hold{Buyer: 9, Sent: 1004 * ms, Enter: 1005 * ms, Lease: 2004 * ms}}
		}
		r.Verdict = r.Oracle.Outcome()
		return &results.File{SchemaVersion: results.SchemaVersion, ID: "f", Complete: true, Runs: []results.Run{r}}
	}
	res := Compare(sale(oracle.ClassSafe), sale(oracle.ClassOverlap), Defaults)
	if !res.Passed() || !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.Contains(n, "OVERSOLD 1 where the design is documented SAFE, LOCK-BROKEN 1 where the design is documented SAFE, OVERLAP 2 where the design is documented SAFE, but a second holder first came in")
	}) {
		t.Errorf("a lease outlived first: want a note; regressions %q, notes %q", res.Regressions, res.Notes)
	}
	res = Compare(sale(oracle.ClassSafe), sale(oracle.ClassBroken), Defaults)
	if res.Passed() || len(res.Regressions) != 3 {
		t.Errorf("a broken lock first: want OVERSOLD, LOCK-BROKEN and OVERLAP regressions; got %q, notes %q", res.Regressions, res.Notes)
	}
}
