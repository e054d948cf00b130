package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// headlineRuns is a headline sale of three designs: fast and safe, slow and safe, slow
// and damaging; and one that sold nothing.
func headlineRuns() []results.Run {
	mk := func(design string, bought int, oversold int64, perSec float64) results.Run {
		rep := oracle.Report{Bought: bought, InitialStock: 100, Oversold: oversold}
		r := results.Run{Scenario: "headline", Impl: design, Complete: true, Verdict: rep.Outcome(),
			Oracle: rep, SalesPerSec: perSec, Params: results.Params{Buyers: 200000, Faults: "client-pause:p=0.002"}}
		r.DamageRate = r.NewRate()
		return r
	}
	return []results.Run{mk("lua", 100, 0, 30000), mk("fencing", 100, 0, 250), mk("set-nx-ex", 104, 4, 300), mk("stuck", 0, 0, 0)}
}

// verdictRuns is a headline sale whose designs earned every kind of verdict: safe,
// not exercised, stuck, overlapping behind a fence, a broken lock with the stock intact,
// and damage.
func verdictRuns() []results.Run {
	mk := func(design string, rep oracle.Report, perSec float64, unfired ...string) results.Run {
		rep.InitialStock = 1000
		r := results.Run{Scenario: "headline", Impl: design, Complete: true, Oracle: rep, SalesPerSec: perSec,
			Params: results.Params{Buyers: 200000, Faults: "client-pause:p=0.01:dist=exp"}}
		r.Judge(rep.Outcome(), unfired, nil)
		r.DamageRate = r.NewRate()
		return r
	}
	return []results.Run{
		mk("lua", oracle.Report{Bought: 1000}, 57848, "client-pause"),
		mk("watch", oracle.Report{Bought: 1000}, 759),
		mk("set-nx-ex", oracle.Report{Bought: 314, Unsold: 686, GaveUpWithStock: 199686}, 128),
		mk("fencing", oracle.Report{Bought: 446, Overlaps: 192, StaleRejected: 190, Unsold: 554, GaveUpWithStock: 199553}, 213),
		mk("token", oracle.Report{Bought: 1000, Overlaps: 3, LockBroken: 3}, 400),
		mk("redislock", oracle.Report{Bought: 420, LostUpdates: 1, Overlaps: 138}, 205),
	}
}

// TestVerdictSentences: the sentences the report writes (its opening and the reading of
// the Pareto view) are made from the verdicts the matrix cells show: no design that
// earned STUCK, OVERLAP or LOCK-BROKEN, nor one a fault never struck, is called safe.
func TestVerdictSentences(t *testing.T) {
	runs := verdictRuns()
	reading := ParetoReading(runs)
	for _, want := range []string{
		"Nothing found at this traffic: watch; the fastest of them is watch at 759 sales/s.",
		"Not exercised, the fault never struck: lua (57848 sales/s).",
		"Stock intact, but: set-nx-ex STUCK: 686 of 1000 units left unsold while 199686 buyers gave up (128 sales/s); " +
			"fencing OVERLAP 192: 192 holds overlapped a holder past its lease; the fence refused 190 stale reads or writes (213 sales/s); " +
			"token LOCK-BROKEN 3: 3 holds began while another holder was surely inside its lease (400 sales/s).",
		"Damage: redislock LOST 1: 1 update to the stock lost, ",
	} {
		if !strings.Contains(reading, want) {
			t.Errorf("reading %q\nlacks %q", reading, want)
		}
	}
	var glance strings.Builder
	WriteGlanceMarkdown(&glance, Glance(runs))
	want := `- **LOST** (lost: updates to the stock, or orders, lost): headline: redislock: 1 update to the stock lost
- **LOCK-BROKEN** (lock broken: two holders at once, both inside their leases; the stock intact): headline: token: 3 holds began while another holder was surely inside its lease
- **OVERLAP** (overlap: two holders at once, one past its lease; the stock intact): headline: fencing: 192 holds overlapped a holder past its lease; the fence refused 190 stale reads or writes
- **STUCK** (left unsold or stuck: stock left on the shelf while buyers gave up, or a lock left with no live holder): headline: set-nx-ex: 686 of 1000 units left unsold while 199686 buyers gave up
- **NOT-EXERCISED** (not exercised: a fault never struck, so the sale says nothing of the design under it): headline: lua: the fault never struck (client-pause)
- **SAFE** (safe: nothing found): headline: watch: 1000 of 1000 sold, nothing found
`
	if glance.String() != want {
		t.Errorf("the opening:\n%s\nwant:\n%s", glance.String(), want)
	}
	// Every design is named once, under the class its cell shows.
	for _, r := range runs {
		if n := strings.Count(glance.String(), " "+r.Impl+": "); n != 1 {
			t.Errorf("%s named %d times in the opening", r.Impl, n)
		}
	}
}

// TestGlanceOfAMatrix: a design that earned a class under several faults of a matrix is
// named once per class, with how many of its fault plans (the matrix says which), or the
// one.
func TestGlanceOfAMatrix(t *testing.T) {
	var runs []results.Run
	for _, f := range []string{"none", "slow-work", "client-pause", "redis-pause", "failover"} {
		c := oracle.ClassOversold
		if f == "none" {
			c = oracle.ClassSafe
		}
		runs = append(runs, results.Run{Scenario: "fault-sale", Impl: "token", Complete: true, Params: results.Params{Faults: f},
			Verdict: oracle.Verdict{Class: c, Count: 1}})
	}
	lines := Glance(runs)
	if len(lines) != 2 || lines[0].Where[0] != "fault-sale (of 5 fault plans): token ×4" ||
		lines[1].Where[0] != "fault-sale (of 5 fault plans): token (none)" {
		t.Errorf("glance %+v", lines)
	}
}

// TestViewsOnTop: the report draws the Pareto view of the headline sale first and a
// sweep's plots against its setting, and report.html shows them after its opening and
// the verdicts.
func TestViewsOnTop(t *testing.T) {
	runs := headlineRuns()
	for i, ttl := range []string{"250ms", "1s"} {
		for _, d := range []string{"token", "set-nx-ex"} {
			r := results.Run{Scenario: "slow-holder ttl=" + ttl, Impl: d, Complete: true, SalesPerSec: float64(100 * (i + 1)),
				Oracle: oracle.Report{Bought: 10, InitialStock: 10}, Params: results.Params{Buyers: 100, Faults: "none"},
				Sweep: &results.SweepPoint{Param: "ttl", Value: ttl, X: []float64{0.25, 1}[i], Unit: "s"}}
			r.DamageRate = r.NewRate()
			runs = append(runs, r)
		}
	}
	figs := Figures(runs)
	if len(figs) == 0 || figs[0].Name != "pareto-headline" || figs[0].Note != "" || figs[0].Reading == "" {
		t.Fatalf("first figure %+v, want the headline's Pareto view", figs[0])
	}
	var sweeps []string
	for _, f := range figs {
		if strings.HasPrefix(f.Name, "sweep-") {
			sweeps = append(sweeps, f.Name+": "+f.Note)
		}
	}
	// No purchase was timed in these runs: the p99 plot says so in its place.
	if len(sweeps) != 3 || !strings.HasSuffix(sweeps[0], ": ") || !strings.Contains(sweeps[2], "nothing to draw") {
		t.Errorf("sweep plots %q, want damage, sales and p99 (with nothing to draw) against ttl", sweeps)
	}
	dir := t.TempDir()
	f := &results.File{SchemaVersion: results.SchemaVersion, ID: "views", Complete: true, Runs: runs}
	if err := Report(context.Background(), dir, []Source{{File: f}}); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	glance, verdicts, pareto := strings.Index(string(page), `id="glance"`), strings.Index(string(page), `id="verdicts"`), strings.Index(string(page), `id="pareto"`)
	if glance < 0 || verdicts < glance || pareto < verdicts || !strings.Contains(string(page), "the fastest of them is lua") {
		t.Errorf("report.html: want the opening, then the verdicts, then the Pareto view and its reading (at %d, %d, %d)", glance, verdicts, pareto)
	}
}

// TestViolationDrawn: a run whose purchases could not be linearized gets porcupine's
// drawing of its smallest violating window beside the report, linked from its cells.
func TestViolationDrawn(t *testing.T) {
	l := oracle.NewLedger(3, 5)
	for i, left := range []int64{4, 4, 3} { // two purchases left 4: one unit sold twice
		l.Entries[i] = oracle.Entry{Outcome: oracle.Bought, Held: true, Enter: time.Duration(i*10) * time.Millisecond,
			Leave: time.Duration(i*10+5) * time.Millisecond, Done: time.Duration(i*10+6) * time.Millisecond, Left: left}
	}
	lin := oracle.CheckLinearizable(l, time.Second)
	if lin.Verdict != oracle.NotLinearizable || lin.FirstViolation == nil {
		t.Fatalf("linearizability %+v", lin)
	}
	run := results.Run{Scenario: "flash-sale", Impl: "seed-setnx", Complete: true, Verdict: oracle.Verdict{Class: oracle.ClassOversold, Count: 1},
		Oracle: oracle.Report{Bought: 3, InitialStock: 5}, Linearizability: &lin, Params: results.Params{Faults: "none"}}
	dir := t.TempDir()
	f := &results.File{SchemaVersion: results.SchemaVersion, ID: "lin", Complete: true, Runs: []results.Run{run}}
	if err := Report(context.Background(), dir, []Source{{File: f}}); err != nil {
		t.Fatal(err)
	}
	name := violationFile(&run)
	drawing, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil || !strings.Contains(string(drawing), "4 left") {
		t.Fatalf("porcupine's drawing %s: %v", name, err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(page), `href="`+name+`"`) {
		t.Errorf("report.html does not link %s", name)
	}
}

// TestExplorationOpensOnItsAnswer: an exploration's report opens on its answer, before
// the verdicts at a glance: a table of the regions whose cells show the kind that tells
// the designs apart, coloured by it (as safe for a rate of nothing, grey where nothing
// was measured), with what differs significantly and the smallest sale.
func TestExplorationOpensOnItsAnswer(t *testing.T) {
	runs := verdictRuns()[:2]
	x := &results.Exploration{Designs: []string{"set-nx-ex", "token"}, Comparisons: 4, Alpha: 0.05,
		Answer: "set-nx-ex is worse than token: LOCK-BROKEN 10/10 vs 0/10, p=1.1e-05 (Holm 4.3e-05), under net-timeout, work << TTL",
		Differences: []results.Difference{{Line: "set-nx-ex is worse than token here: LOCK-BROKEN 10/10 vs 0/10, p=1.1e-05 (Holm 4.3e-05); under net-timeout, work << TTL",
			Smallest: "stockbench run --lock set-nx-ex --fault net-timeout --buyers 2 --stock 4"}},
		Regions: []results.Region{
			{Where: "under net-timeout, work << TTL", Kind: "LOCK-BROKEN", Rates: []string{"10/10", "0/10"}, Differs: "set-nx-ex worse by LOCK-BROKEN: p=1.1e-05 (Holm 4.3e-05)",
				Smallest: "stockbench run --lock set-nx-ex --fault net-timeout --buyers 2 --stock 4"},
			{Where: "with no fault, work >= TTL", Kind: "OVERSOLD", Rates: []string{"10/10", "not measured"}},
			{Where: "under evict, work < TTL", Kind: "OVERSOLD", Rates: []string{"not measured", "not measured"}}}}
	dir := t.TempDir()
	f := &results.File{SchemaVersion: results.SchemaVersion, ID: "explore", Complete: true, Runs: runs, Exploration: x}
	if err := Report(context.Background(), dir, []Source{{File: f}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	answer, glance := strings.Index(page, `id="answer"`), strings.Index(page, `id="glance"`)
	if answer < 0 || glance < answer {
		t.Fatalf("want the answer before the glance (at %d, %d)", answer, glance)
	}
	for _, want := range []string{
		"<title>stockbench report explore: set-nx-ex against token</title>",
		"<b>set-nx-ex is worse than token: LOCK-BROKEN 10/10 vs 0/10",
		`<td class="cmd">set-nx-ex worse by LOCK-BROKEN: p=1.1e-05 (Holm 4.3e-05)</td><td class="cmd sale"><code>stockbench run --lock set-nx-ex --fault net-timeout --buyers 2 --stock 4</code>`,
		`<td class="v-LOCKBROKEN" title="set-nx-ex">LOCK-BROKEN 10/10</td><td class="v-SAFE" title="token">LOCK-BROKEN 0/10</td>`,
		`<td class="v-OVERSOLD" title="set-nx-ex">OVERSOLD 10/10</td><td class="v-none" title="token">OVERSOLD not measured</td>`,
		"not shrunk: the budget ended first",
		`<td class="cmd">none</td>`,
		`<tr class="differs"><td class="name">under net-timeout, work &lt;&lt; TTL</td>`,
		`<tr><td class="name">with no fault, work &gt;= TTL</td>`,
		`<td class="cmd">not compared: nothing measured</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}
