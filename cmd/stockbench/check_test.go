package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// examples is where the shipped design and run files are, from this package.
const examples = "../../examples"

// checkFails runs `stockbench check` on a run file that must fail (exit 1), and returns
// what it printed and its BROKEN lines.
func checkFails(t *testing.T, file, out string) (stdout string, broken []string) {
	t.Helper()
	code, stdout, stderr := stockbench(t, "check", file, "--out", out)
	if code != bench.ExitFailed {
		t.Fatalf("want exit 1, got %d:\n%s\n%s", code, stdout, stderr)
	}
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "BROKEN: ") {
			broken = append(broken, l)
		}
	}
	return stdout, broken
}

// writeFile writes body to dir/name and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCheckPassesAndGates: a run file whose thresholds hold exits 0; its run, kept as a
// baseline, gates the next check, which fails when it lost a sale the baseline had.
func TestCheckPassesAndGates(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	dir := t.TempDir()
	token, _ := filepath.Abs(filepath.Join(examples, "locks", "token-scripts.json"))
	queue, _ := filepath.Abs(filepath.Join(examples, "queues", "reliable-scripts.json"))
	// On the queue run "*" bounds oversold (stuck is no queue's figure), and the design's
	// own key bounds lost in its place.
	pass := writeFile(t, dir, "pass.json", `{
		"lock_files": ["`+token+`"], "queue_files": ["`+queue+`"],
		"faults": ["none", "crash-holder"], "queue_faults": ["worker-crash"], "fulfils": ["idempotent"],
		"settings": {"buyers": 60, "stock": 20, "seed": 3},
		"thresholds": {
			"*": ["oversold == 0", "lost == 0", "stuck == 0"],
			"token-scripts/none": ["p99 < 5s", "sold == 20"],
			"reliable-scripts": ["lost <= 0", "duplicated == 0"]
		}
	}`)
	out := filepath.Join(dir, "runs")
	code, stdout, stderr := stockbench(t, "check", pass, "--out", out)
	if code != bench.ExitOK || !strings.Contains(stdout, "check: PASS, 11 thresholds held on 3 runs") {
		t.Fatalf("want exit 0 and all held, got %d:\n%s\n%s", code, stdout, stderr)
	}
	code, _, stderr = stockbench(t, "baseline", "--runs", out, "--to", filepath.Join(dir, "baseline.json"))
	if code != bench.ExitOK {
		t.Fatalf("baseline: %d %s", code, stderr)
	}
	// The same designs with the crash-holder sale left out: the baseline has a run that
	// this one lacks.
	gated := writeFile(t, dir, "gated.json", `{
		"lock_files": ["`+token+`"], "queue_files": ["`+queue+`"],
		"faults": ["none"], "queue_faults": ["worker-crash"], "fulfils": ["idempotent"],
		"settings": {"buyers": 60, "stock": 20, "seed": 3},
		"baseline": "baseline.json", "gate_rules": "rules.json"
	}`)
	writeFile(t, dir, "rules.json", `{"min_samples": 1000}`)
	code, stdout, _ = stockbench(t, "check", gated, "--out", out)
	if code != bench.ExitFailed || !strings.Contains(stdout, "REGRESSION: ") || !strings.Contains(stdout, "crash-holder") {
		t.Errorf("want exit 1 with the missing sale as a regression, got %d:\n%s", code, stdout)
	}
}

// TestCheckBadInput: every mistake in a run file is one line naming the file and the
// field, exit 2, and no run directory.
func TestCheckBadInput(t *testing.T) {
	dir := t.TempDir()
	token, _ := filepath.Abs(filepath.Join(examples, "locks", "token-scripts.json"))
	lf := `"lock_files": ["` + token + `"], "faults": ["none"]`
	writeFile(t, dir, "broken.lua", "if redis.call('GET', KEYS[1] then return 1 end")
	writeFile(t, dir, "badscript.json", `{"name": "bad-script", "lock": {"acquire": {"lua": "return 1"}, "release": {"file": "broken.lua", "keys": ["lock"]}}}`)
	for _, tc := range []struct{ name, body, want string }{
		{"syntax", `{"locks": [}`, "line 1, column 12: invalid character"},
		{"unknown field", `{"lock": ["lua"]}`, `unknown field "lock"`},
		{"unknown setting", `{` + lf + `, "settings": {"bogus": 1}, "thresholds": {"*": ["oversold == 0"]}}`, "settings.bogus: unknown setting"},
		{"bad setting", `{` + lf + `, "settings": {"buyers": 0}, "thresholds": {"*": ["oversold == 0"]}}`, "settings.buyers: must be positive"},
		{"machine setting", `{` + lf + `, "settings": {"redis-url": "redis://x"}, "thresholds": {"*": ["oversold == 0"]}}`, "settings.redis-url: unknown setting"},
		{"bad threshold", `{` + lf + `, "thresholds": {"*": ["oversold = 0"]}}`, `thresholds["*"][0]: "oversold = 0": want METRIC OP VALUE`},
		{"typo in a selector", `{` + lf + `, "thresholds": {"tokn-scripts": ["oversold == 0"]}}`, "tokn-scripts is no design of this run"},
		{"reference not run", `{` + lf + `, "thresholds": {"*": ["sales_per_sec >= 0.5 * lua"]}}`, "compares with lua, which this run does not run"},
		{"missing design file", `{"lock_files": ["nope.json"], "thresholds": {"*": ["oversold == 0"]}}`, "lock_files: design file: open " + filepath.Join(dir, "nope.json")},
		{"missing baseline", `{` + lf + `, "baseline": "nope.json"}`, "baseline: " + filepath.Join(dir, "nope.json") + ": no such run directory"},
		{"nothing to check", `{` + lf + `}`, "nothing to check: give thresholds, a baseline, or both"},
		{"unknown fault", `{` + lf + `, "faults": ["meteor"], "thresholds": {"*": ["oversold == 0"]}}`, `unknown fault "meteor"`},
		{"a script Redis refuses", `{"lock_files": ["badscript.json"], "thresholds": {"*": ["oversold == 0"]}}`,
			filepath.Join(dir, "badscript.json") + ": release script (" + filepath.Join(dir, "broken.lua") + "): ERR "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := writeFile(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".json", tc.body)
			out := filepath.Join(t.TempDir(), "runs")
			code, _, stderr := stockbench(t, "check", file, "--out", out)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if code != bench.ExitUsage || !strings.HasPrefix(last, "stockbench: ") || !strings.Contains(last, tc.want) {
				t.Errorf("want exit 2 and a line with %q, got %d:\n%s", tc.want, code, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input must not create %s", out)
			}
		})
	}
	code, _, stderr := stockbench(t, "check", filepath.Join(dir, "none", "stockbench.json"))
	if code != bench.ExitUsage || !strings.Contains(stderr, "no such file") {
		t.Errorf("a missing run file: want exit 2, got %d: %s", code, stderr)
	}
}
