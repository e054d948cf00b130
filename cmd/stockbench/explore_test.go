package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/results"
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

// TestExplore runs the explorer on a real Redis: none (no lock) against lua (one script)
// over timings and loads alone, nobody naming a work time or a contention. Whatever the
// draws, lua cannot oversell; none oversells whenever two buyers read the stock before
// either writes, which every drawn sale with a unit per buyer or fewer gives it, so the
// shrink (which keeps a sale only when each of its tries oversells) leaves a sale that
// oversold on every try, and ten reruns of it against lua's ten are significant unless
// none's rate fell under 7 in 10. The run admits no other outcome.
func TestExplore(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "explore", "--lock", "none", "--lock", "lua", "--faults", "none", "--budget", "40s", "--out", out)
	if code != bench.ExitFailed || !strings.Contains(stdout, "DIFFERENCE none is worse than lua here: OVERSOLD") {
		t.Fatalf("exit %d, want 1 with none worse than lua:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "explore: searching") || !strings.Contains(stdout, "smallest: stockbench run --scenario fault-sale --lock none") {
		t.Errorf("no progress line, or no smallest command:\n%s\n%s", stdout, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "explore.json"))
	if len(dirs) != 1 {
		t.Fatalf("want one explore.json, got %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep explore.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		for _, r := range f.Rates {
			if r.Design == "lua" && (r.Shown["OVERSOLD"] > 0 || r.Shown["LOST-UPDATE"] > 0) {
				t.Errorf("lua oversold or lost an update under %s, %s: %v", f.Faults, f.Timing, r.Shown)
			}
		}
		if s := f.Seen["OVERSOLD"]; len(s) == 2 && s[1] > 0 {
			t.Errorf("lua seen overselling in the search under %s, %s", f.Faults, f.Timing)
		}
	}
	for _, name := range []string{"explore.md", "report.html", "results.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("explore wrote no %s: %v", name, err)
		}
	}
	f := readRun(t, out, "")
	if len(f.Runs) == 0 || f.Runs[0].Sale == nil || f.Runs[0].Sale.Design != "none" {
		t.Errorf("results.json: want the findings' example runs with their sales, got %d runs", len(f.Runs))
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

// TestLockGo builds the Go adapter against a library's release it names, with the
// features that release has (v4.11.0 has no WithSetNXOnExtend, v4.12.1 has), and runs
// it as an adapter; a spec that names no version, or a module no adapter imports, is
// one line and exit 2.
func TestLockGo(t *testing.T) {
	t.Parallel()
	bin := filepath.Join("..", "..", "bin", "adapters", "redsync-lock-v4.11.0")
	os.Remove(bin) // built again, by the command
	code, stdout, stderr := stockbench(t, "run", "--lock-go", "github.com/go-redsync/redsync/v4@v4.11.0 --extend", "--adapter-nodes", "5",
		"--buyers", "4", "--stock", "4", "--out", t.TempDir())
	if code != bench.ExitOK || !strings.Contains(stdout, "redsync-lock-v4.11.0  none    SAFE") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Errorf("no adapter built: %v", err)
	}
	code, _, stderr = stockbench(t, "run", "--lock-go", "github.com/go-redsync/redsync/v4@v4.11.0 --extend --setnx-on-extend", "--adapter-nodes", "5", "--out", t.TempDir())
	if code != bench.ExitUsage || !strings.Contains(stderr, "has no WithSetNXOnExtend") {
		t.Errorf("v4.11.0 with --setnx-on-extend: exit %d, %s", code, stderr)
	}
	for _, spec := range []string{"github.com/go-redsync/redsync/v4", "example.com/nolock@v1.0.0", ""} {
		out := t.TempDir()
		code, _, stderr := stockbench(t, "run", "--lock-go", spec, "--out", out)
		entries, _ := os.ReadDir(out)
		if code != bench.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || len(entries) > 0 {
			t.Errorf("--lock-go %q: exit %d, %s", spec, code, stderr)
		}
	}
}

// TestCheckExplores: a run file's explore block explores its design after its sales,
// and its thresholds judge each finding's reruns, a rate threshold reading them as it
// reads --runs. none oversells 60 buyers on 20 units (as TestExitStatus says), and in
// the exploration every drawn sale where two buyers read one unit before either writes.
func TestCheckExplores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rf := writeFile(t, dir, "stockbench.json", `{"locks": ["none"], "scenarios": ["flash-sale"], "faults": ["none"], "queues": [],
		"settings": {"buyers": 60, "stock": 20, "think": "2ms"},
		"thresholds": {"none": ["oversold_rate <= 0"]},
		"explore": {"budget": "30s", "faults": ["none"], "confirm": 3}}`)
	code, stdout, stderr := stockbench(t, "check", rf, "--out", t.TempDir())
	_, explored, _ := strings.Cut(stdout, "check: exploring none for 30s")
	if code != bench.ExitFailed || !strings.Contains(explored, "BROKEN: ") || !strings.Contains(explored, "oversold_rate <= 0") {
		t.Fatalf("exit %d, want 1 with the exploration's reruns over the threshold:\n%s\n%s", code, stdout, stderr)
	}
	bad := writeFile(t, dir, "bad.json", `{"locks": ["none"], "thresholds": {"none": ["oversold == 0"]}, "explore": {"budget": "soon"}}`)
	if code, _, stderr := stockbench(t, "check", bad, "--out", t.TempDir()); code != bench.ExitUsage || !strings.Contains(stderr, "explore: budget") {
		t.Errorf("a bad budget: exit %d, %s", code, stderr)
	}
}

// TestExploreInterrupted: Ctrl-C keeps what the exploration found: its directory is
// written, marked incomplete, it exits 130 saying so, and no Redis is left behind.
func TestExploreInterrupted(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cmd := exec.Command(binary, "explore", "--lock", "none", "--lock", "lua", "--faults", "none", "--budget", "2m", "--redis", "process", "--out", out)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(15 * time.Second) // some batches in
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != bench.ExitInterrupted || !strings.HasPrefix(lastLine([]byte(stdout.String())), "exit 130: interrupted") {
		t.Fatalf("exit %d, want 130 with its line:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*", "explore.md"))
	if len(files) != 1 {
		t.Fatalf("want one explore.md, got %v", files)
	}
	md, _ := os.ReadFile(files[0])
	if !strings.Contains(string(md), "INCOMPLETE (interrupted)") {
		t.Errorf("explore.md does not say it is incomplete:\n%s", md)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "explore.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep explore.Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Complete || rep.Redis.PID == 0 {
		t.Fatalf("explore.json: %v, complete %v, redis %+v", err, rep.Complete, rep.Redis)
	}
	leftBehind(t, &results.File{Target: rep.Redis})
}
