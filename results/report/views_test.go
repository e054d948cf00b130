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

// TestParetoReading: the line under the Pareto plot names the designs that did no
// damage and the fastest of them, then each other's damage, then those that sold nothing.
func TestParetoReading(t *testing.T) {
	got := ParetoReading(headlineRuns())
	for _, want := range []string{
		"No damage at this traffic: lua, fencing; the fastest of them is lua at 30000 sales/s.",
		"Damage: set-nx-ex 385 (151-947) per 10,000 sales (300 sales/s).",
		"Sold nothing: stuck.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("reading %q\nlacks %q", got, want)
		}
	}
}

// TestViewsOnTop: the report draws the Pareto view of the headline sale first and a
// sweep's plots against its setting, and report.html shows the Pareto view above the
// verdicts.
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
	pareto, verdicts := strings.Index(string(page), `id="pareto"`), strings.Index(string(page), `id="verdicts"`)
	if pareto < 0 || pareto > verdicts || !strings.Contains(string(page), "the fastest of them is lua") {
		t.Errorf("report.html: the Pareto view and its reading must come before the verdicts")
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
