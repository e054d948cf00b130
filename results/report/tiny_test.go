package report

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// tinyRun is a run of a sale with n timed purchases, all taking d.
func tinyRun(t testing.TB, impl, faults string, n int, d time.Duration) results.Run {
	t.Helper()
	rec := results.NewRecorder(1)
	var sold []time.Duration
	for i := range n {
		rec.Record(0, results.Purchase, d)
		sold = append(sold, time.Duration(i+1)*time.Millisecond)
	}
	r := results.Run{Kind: "lock", Scenario: "flash-sale", Impl: impl, Complete: true, Params: results.Params{Faults: faults},
		Latency: map[string]results.Latency{}, Sales: results.Timeline(sold)}
	if n > 0 {
		l, err := results.Summarize(rec.Histogram(results.Purchase))
		if err != nil {
			t.Fatal(err)
		}
		r.Latency[results.Purchase.String()] = l
	}
	rep := oracle.Report{Bought: n, InitialStock: int64(n)}
	r.Judge(rep.Outcome(), nil, nil)
	return r
}

// TestTinyReports: the report of every tiny sale is written whole, the plots that have
// nothing to draw named with the reason. A single purchase, or several equally fast,
// once panicked inside gonum's log axis.
func TestTinyReports(t *testing.T) {
	tests := []struct {
		name string
		runs []results.Run
		note string // in report.html when a plot had nothing to draw
	}{
		// Nothing sold: no latency, no throughput.
		{"nothing sold", []results.Run{tinyRun(t, "lua", "", 0, 0)}, "nothing to draw"},
		// One purchase: a spectrum of one point.
		{"one purchase", []results.Run{tinyRun(t, "lua", "", 1, 300*time.Microsecond)}, ""},
		// Five purchases of the same time: a flat spectrum.
		{"equal purchases", []results.Run{tinyRun(t, "set-nx-ex", "", 5, time.Millisecond)}, ""},
		// Purchases under a microsecond: recorded as 0.
		{"instant purchases", []results.Run{tinyRun(t, "lua", "", 3, 0)}, ""},
		// A matrix of one design, one timed and one not.
		{"a matrix", []results.Run{tinyRun(t, "lua", "", 1, time.Millisecond), tinyRun(t, "lua", "slow-work", 0, 0)}, "nothing to draw"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			f := &results.File{SchemaVersion: results.SchemaVersion, ID: "tiny", Complete: true, Runs: tt.runs}
			out, err := results.Create(dir, "run")
			if err != nil {
				t.Fatal(err)
			}
			if err := Write(context.Background(), out, f); err != nil {
				t.Fatalf("write: %v", err)
			}
			html, err := os.ReadFile(filepath.Join(out.Dir, "report.html"))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(html, []byte("could not be drawn")) {
				t.Errorf("a plot failed:\n%s", html)
			}
			if tt.note != "" && !bytes.Contains(html, []byte(tt.note)) {
				t.Errorf("report.html does not say %q", tt.note)
			}
		})
	}
}

// TestPlotFailureIsNoted: a plot whose drawing panics in the plotting library is named
// in the report as not drawn; the other plots and results.json are written.
func TestPlotFailureIsNoted(t *testing.T) {
	bad := plot.New()
	bad.X.Scale = plot.LogScale{}
	line, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 1}, {X: 0, Y: 2}}) // a log axis from 0
	bad.Add(line)
	figs := []Figure{
		{Name: "bad", Title: "bad plot", plot: bad, w: 4 * vg.Inch, h: 3 * vg.Inch},
		Figures([]results.Run{tinyRun(t, "lua", "", 10, time.Millisecond)})[0],
	}
	dir := t.TempDir()
	if err := SaveAll(context.Background(), dir, figs, PlotsBoth); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(figs[0].Note, "could not be drawn") {
		t.Errorf("want the failed plot noted, got %q", figs[0].Note)
	}
	if _, err := os.Stat(filepath.Join(dir, PlotsDir, "bad.png")); err == nil {
		t.Error("a half-written bad.png was left")
	}
	if _, err := os.Stat(filepath.Join(dir, PlotsDir, figs[1].Name+".svg")); err != nil || figs[1].Note != "" {
		t.Errorf("the good plot was not written: %v %q", err, figs[1].Note)
	}
}

// TestReportStops: a report asked to stop leaves report.html unwritten and says so.
func TestReportStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f := &results.File{SchemaVersion: results.SchemaVersion, ID: "x", Complete: true, Runs: []results.Run{tinyRun(t, "lua", "", 10, time.Millisecond)}}
	dir := t.TempDir()
	if err := Report(ctx, dir, []Source{{File: f}}); err == nil {
		t.Fatal("want ctx's error")
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		t.Error("report.html written by a stopped report")
	}
}
