package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// TestExploreBadInput: each bad command line is one line and exit 2, and creates
// nothing.
func TestExploreBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"explore"},
		{"explore", "--lock", "nosuch"},
		{"explore", "--lock", "lua", "--queue", "stream"},
		{"explore", "--lock", "lua", "--budget", "1s"},
		{"explore", "--lock", "lua", "--confirm", "0"},
		{"explore", "--lock", "lua", "--faults", "nosuch"},
		{"explore", "--lock", "lua", "--faults", "worker-crash"},
		{"explore", "--lock", "lua", "--parallel", "0"},
		{"explore", "--lock", "lua", "stray"},
	} {
		out := t.TempDir()
		code, _, stderr := stockbench(t, append(args, "--out", out)...)
		entries, _ := os.ReadDir(out)
		if code != bench.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || len(entries) != 0 {
			t.Errorf("%q: exit %d, %d entries written, stderr %q; want 2, nothing, one line", args, code, len(entries), stderr)
		}
	}
}

// TestRuns: --runs draws a sale with seeds of its own, the first the sale's own; the
// record is the worst draw, whose rerun line has its seed; rate thresholds read the
// draws. none oversells 60 buyers reading 20 units at once in every draw (as in
// TestExitStatus); lua cannot.
func TestRuns(t *testing.T) {
	t.Parallel()
	small := []string{"--buyers", "60", "--stock", "20", "--think", "2ms"}
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, append([]string{"run", "--lock", "none", "--runs", "3", "--out", out}, small...)...)
	if code != bench.ExitOK || !strings.Contains(stdout, "Rates over seeds") || !strings.Contains(stdout, "flash-sale/none/none: OVERSOLD 3/3; ") || !strings.Contains(stdout, "OVERSOLD 3/3 (44%-100%)") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	f := readRun(t, out, "")
	r := f.Runs[0]
	if len(f.Runs) != 1 || r.Draws == nil || r.Draws.Runs != 3 || len(r.Draws.Each) != 3 || r.Draws.Each[0].Seed != 1 {
		t.Fatalf("want one record of 3 draws, the first seeded 1: %+v", r.Draws)
	}
	seeds := map[uint64]bool{}
	for _, d := range r.Draws.Each {
		seeds[d.Seed] = true
	}
	if len(seeds) != 3 || !seeds[r.Sale.Seed()] || !strings.Contains(strings.Join(r.Rerun, " "), "--seed "+r.Sale.Get("seed")) {
		t.Errorf("seeds %v; the record's %d, its rerun %q", seeds, r.Sale.Seed(), r.Rerun)
	}

	dir := t.TempDir()
	rf := writeFile(t, dir, "stockbench.json", `{"locks": ["none", "lua"], "scenarios": ["flash-sale"], "faults": ["none"], "queues": [], "runs": 3,
		"settings": {"buyers": 60, "stock": 20, "think": "2ms"},
		"thresholds": {"lua": ["oversold_rate <= 0", "broken_locks_rate <= 0"], "none": ["oversold_rate < 0.5"]}}`)
	code, stdout, stderr = stockbench(t, "check", rf, "--out", t.TempDir())
	if code != bench.ExitFailed || !strings.Contains(stdout, "oversold_rate < 0.5") || strings.Contains(stdout, "BROKEN: lua") {
		t.Fatalf("check: exit %d, want 1 with none's rate broken and lua's held:\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := stockbench(t, "run", "--lock", "lua", "--runs", "0", "--out", t.TempDir()); code != bench.ExitUsage {
		t.Errorf("--runs 0: exit %d, %s", code, stderr)
	}
}
