package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// savedRun writes a hand-made results.json into dir/name: lua and set-nx-ex on
// flash-sale, set-nx-ex oversold by oversold, both documented SAFE.
func savedRun(t *testing.T, dir, name string, oversold int64) string {
	t.Helper()
	out, err := results.Create(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	rec := results.NewRecorder(1)
	for i := range 500 {
		rec.Record(0, results.Purchase, time.Duration(100+i)*time.Microsecond)
	}
	lat, err := results.Summarize(rec.Histogram(results.Purchase))
	if err != nil {
		t.Fatal(err)
	}
	f := &results.File{SchemaVersion: results.SchemaVersion, ID: name, Complete: true}
	for _, impl := range []string{"lua", "set-nx-ex"} {
		rep := oracle.Report{Bought: 500, InitialStock: 500}
		if impl == "set-nx-ex" {
			rep.Oversold, rep.Bought = oversold, 500+int(oversold)
		}
		f.Runs = append(f.Runs, results.Run{Kind: "lock", Scenario: "flash-sale", Impl: impl, Complete: true,
			Oracle: rep, Verdict: rep.Outcome(),
			Expected: []oracle.Class{oracle.ClassSafe}, SalesPerSec: 1000, Latency: map[string]results.Latency{"purchase": lat}})
	}
	if err := out.Progress(f); err != nil {
		t.Fatal(err)
	}
	return out.Dir
}

func TestGateCommand(t *testing.T) {
	dir := t.TempDir()
	good := savedRun(t, dir, "20260101-000000-a0", 0)
	bad := savedRun(t, dir, "20260102-000000-b0", 3)
	rules := filepath.Join(dir, "gate.json")
	os.WriteFile(rules, []byte(`{"max_p99_rise": 0.2}`), 0o644)
	slim := filepath.Join(dir, "baseline", "results.json")
	if code, stdout, stderr := stockbench(t, "baseline", "--from", good, "--to", slim); code != 0 || !strings.Contains(stdout, "holds run") {
		t.Fatalf("baseline: exit %d: %s %s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(slim); strings.Contains(string(b), `"hdr": "H`) {
		t.Error("the baseline kept the histograms")
	}
	broken := filepath.Join(dir, "broken.json")
	os.WriteFile(broken, []byte(`{"max_p99_rise": "lots"}`), 0o644)
	// A baseline that decodes but holds nothing to compare would pass every run.
	nullRuns := filepath.Join(dir, "null-runs.json")
	os.WriteFile(nullRuns, []byte(`{"schema_version": 1, "id": "x", "runs": null}`), 0o644)
	noOracle := filepath.Join(dir, "no-oracle.json")
	os.WriteFile(noOracle, []byte(`{"schema_version": 1, "id": "x", "runs": [{"scenario": "s", "impl": "lua", "params": {},
		"complete": true, "verdict": "SAFE", "class": "SAFE", "cell": "SAFE"}]}`), 0o644)
	tests := []struct {
		name string
		args []string
		code int
		want string // in stdout for 0 and 1, in the one stderr line for 2
	}{
		{"pass", []string{"--baseline", good, "--current", good, "--rules", rules}, 0, "gate: PASS"},
		{"pass against a slimmed baseline", []string{"--baseline", slim, "--current", good}, 0, "gate: PASS"},
		{"regression", []string{"--baseline", good, "--current", bad}, 1,
			"REGRESSION: flash-sale/set-nx-ex/none: OVERSOLD 3 where the design is documented SAFE"},
		{"newest run by default", []string{"--baseline", good, "--runs", dir}, 1, "gate: FAIL, 1 regressions"},
		{"baseline required", []string{"--current", good}, 2, "--baseline is required"},
		{"missing baseline", []string{"--baseline", filepath.Join(dir, "nope")}, 2, "no such run directory or results file"},
		{"bad gate file", []string{"--baseline", good, "--current", good, "--rules", broken}, 2, "broken.json"},
		{"bad tolerance", []string{"--baseline", good, "--current", good, "--max-throughput-drop", "2"}, 2, "max_throughput_drop 2 is out of range"},
		{"no runs", []string{"--baseline", good, "--runs", filepath.Join(dir, "empty")}, 2, "no run under"},
		{"baseline runs null", []string{"--baseline", nullRuns, "--current", good}, 2, `"runs" is null`},
		{"current without an oracle", []string{"--baseline", good, "--current", noOracle}, 2, `run 0: "oracle" is missing`},
		{"baseline: no runs", []string{"baseline", "--runs", filepath.Join(dir, "empty")}, 2, "name it with --from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := tt.args
			if args[0] != "baseline" {
				args = append([]string{"gate"}, args...)
			}
			code, stdout, stderr := stockbench(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			got := stdout
			if code == 2 {
				got = stderr
				if n := strings.Count(strings.TrimSpace(stderr), "\n"); n != 0 {
					t.Errorf("want one line on stderr, got %d:\n%s", n+1, stderr)
				}
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("want %q in:\n%s", tt.want, got)
			}
		})
	}
}

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	a := savedRun(t, dir, "A", 0)
	b := savedRun(t, dir, "B", 2)
	out := filepath.Join(dir, "cmp")
	code, stdout, stderr := stockbench(t, "report", a, b, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	html, err := os.ReadFile(filepath.Join(out, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	// Side by side: each design's rows from A and B next to each other.
	page := string(html)
	matrices := page[strings.Index(page, `id="verdicts"`):] // past the opening, which names them too
	ia, ib := strings.Index(matrices, "set-nx-ex @A"), strings.Index(matrices, "set-nx-ex @B")
	if ia < 0 || ib < 0 || ib < ia || strings.Contains(matrices[ia:ib], "lua @") {
		t.Errorf("want set-nx-ex @A and @B adjacent in the matrix")
	}
	for _, want := range []string{"A vs B", "OVERSOLD 2", `href="plots/latency-flash-sale.png"`} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Rebuilding one run's report writes into its directory.
	if code, _, stderr := stockbench(t, "report", a); code != 0 {
		t.Fatalf("report %s: exit %d: %s", a, code, stderr)
	}
	if _, err := os.Stat(filepath.Join(a, "report.html")); err != nil {
		t.Error(err)
	}

	old := filepath.Join(dir, "old")
	os.Mkdir(old, 0o755)
	os.WriteFile(filepath.Join(old, "results.json"), []byte(`{"schema_version": 0, "runs": []}`), 0o644)
	junk := filepath.Join(dir, "junk.json")
	os.WriteFile(junk, []byte(`<html>`), 0o644)
	nullRuns := filepath.Join(dir, "null-runs.json")
	os.WriteFile(nullRuns, []byte(`{"schema_version": 1, "id": "x", "runs": null}`), 0o644)
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"no directory": {nil, "name at least one run directory"},
		"missing":      {[]string{filepath.Join(dir, "nope")}, "no such run directory"},
		"old schema":   {[]string{old}, "schema_version 0; this stockbench reads 1"},
		"not results":  {[]string{junk}, "not a results file"},
		"no runs":      {[]string{nullRuns}, `"runs" is null`},
	} {
		code, _, stderr := stockbench(t, append([]string{"report"}, tt.args...)...)
		if code != 2 || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%s: want exit 2 and one line naming %q, got %d: %s", name, tt.want, code, stderr)
		}
	}
}

// TestBaselineCoversTheDefaultMatrix: the committed baseline holds every cell make bench
// runs (the default matrix and the headline), so that make gate compares each with a
// run of its own rather than with its documented verdict alone. make baseline after
// make bench mends it when a design, a fault or a preset joins.
func TestBaselineCoversTheDefaultMatrix(t *testing.T) {
	f, err := results.Read(filepath.Join("..", "..", "baseline", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool)
	for i := range f.Runs {
		r := &f.Runs[i]
		have[r.Subject()+"/"+r.Impl+"/"+r.FaultPlan()] = true
	}
	var want []string
	for _, s := range scenarios.DefaultMatrix {
		for _, fp := range catalog.DefaultPlans(faults.Locks) {
			for _, l := range lockimpl.Names() {
				want = append(want, s+"/"+l+"/"+fp)
			}
		}
	}
	for _, s := range scenarios.DefaultQueueMatrix {
		for _, fu := range scenarios.Fulfils {
			for _, fp := range catalog.DefaultPlans(faults.Queues) {
				for _, q := range queueimpl.Names() {
					want = append(want, s+" ("+string(fu)+" fulfil)/"+q+"/"+fp)
				}
			}
		}
	}
	headline, _ := scenarios.Lookup("headline")
	for _, l := range scenarios.Headline {
		want = append(want, "headline/"+l+"/"+headline.Faults.String())
	}
	missing := 0
	for _, k := range want {
		if !have[k] {
			missing++
			t.Errorf("not in the baseline: %s", k)
		}
	}
	if missing > 0 {
		t.Logf("%d of %d cells missing: run make bench, then make baseline", missing, len(want))
	}
}

// TestGateBaseRefusesBadInput: a ref that is not a commit, a base that does not build and
// too few pairs each get one line and exit 2, and leave no base directory behind.
func TestGateBaseRefusesBadInput(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q")
	if err := os.MkdirAll(filepath.Join(repo, "cmd", "stockbench"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module broken\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "cmd", "stockbench", "main.go"), []byte("package main\n\nfunc main() { this is not Go }\n"), 0o644)
	git("add", ".")
	git("commit", "-q", "-m", "a base that does not build")
	tmp := t.TempDir()
	locks, err := filepath.Abs(filepath.Join("..", "..", "examples", "locks"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no such ref", []string{"--base", "no-such-branch"}, "gate: --base no-such-branch: not a commit of the checkout"},
		{"a base that does not build", []string{"--base", "HEAD"}, "gate: the base HEAD does not build: go build:"},
		{"too few pairs", []string{"--base", "HEAD", "--pairs", "2"}, "--pairs 2: at least 3"},
		{"one version of a design", []string{"--base-with", "--locks lua"}, "--base-with and --with name the two versions of a design: give both"},
		{"a quote left open", []string{"--base-with", "'--locks lua", "--with", "--locks lua"}, "gate: --base-with: \"'--locks lua\": a quote or an escape left open"},
		{"a design under two names", []string{"--base-with", "--lock-file " + locks + "/token-scripts.json --locks token-scripts",
			"--with", "--lock-file " + locks + "/px-seconds.json --locks px-seconds", "--pairs", "3", "--",
			"--scenarios", "flash-sale", "--queues", "", "--buyers", "4", "--stock", "4", "--think", "0"},
			"the base ran rows the change did not (flash-sale/token-scripts/none, one at a time: flash-sale/token-scripts/none) and the change rows the base did not (flash-sale/px-seconds/none, one at a time: flash-sale/px-seconds/none)"},
		{"an unknown server mode", []string{"--base", "HEAD", "--redis", "nonsense"}, `gate: --redis, --redis-url: unknown redis mode "nonsense"`},
		// The gate takes the flags that choose the servers, as every command that runs
		// sales does, and its trials run on that server (here none answers); the URL's
		// password reaches no output (it goes to the trials in their environment).
		{"the trials' server, on the gate", []string{"--base-with", "--locks lua", "--with", "--locks lua", "--redis-url", "redis://:Hunter2-gate@127.0.0.1:1",
			"--pairs", "3", "--", "--scenarios", "flash-sale", "--queues", "", "--buyers", "4", "--stock", "4", "--think", "0"},
			"refused: exit 2: redis: redis at 127.0.0.1:1 does not answer"},
		{"a design file the change cannot read", []string{"--base-with", "--locks lua", "--with", "--lock-file " + locks + "/no-such.json --locks lua", "--",
			"--scenarios", "flash-sale", "--queues", "", "--buyers", "4", "--stock", "4", "--think", "0"}, "no-such.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(binary, append([]string{"gate"}, tc.args...)...)
			cmd.Dir = repo
			cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
			code, stdout, stderr := runCmd(t, cmd)
			if code != 2 {
				t.Fatalf("exit %d, want 2\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			if line := strings.TrimSpace(stderr); !strings.Contains(line, tc.want) || strings.Contains(line, "\n") {
				t.Errorf("stderr %q, want one line with %q", line, tc.want)
			}
			if strings.Contains(stdout+stderr, "Hunter2") {
				t.Errorf("the password is in the output:\n%s%s", stdout, stderr)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("left behind in TMPDIR: %v", left)
			}
		})
	}
}
