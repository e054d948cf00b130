package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// readJUnit reads a JUnit file with junitparser (Debian's python3-junitparser), the
// reader a CI system's plugins are built like, and returns a line per case
// ("class\tname\tresult\tmessage\ttext", the text's newlines as \n) and per suite.
func readJUnit(t *testing.T, path string) []string {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-c", "import junitparser").Run(); err != nil {
		if os.Getenv("STOCKBENCH_REQUIRE_CI_TOOLS") != "" {
			t.Fatalf("junitparser is missing and STOCKBENCH_REQUIRE_CI_TOOLS is set: apt-get install python3-junitparser")
		}
		t.Skip("no junitparser for /usr/bin/python3 (apt-get install python3-junitparser)")
	}
	out, err := exec.Command("/usr/bin/python3", filepath.Join("testdata", "junit_read.py"), path).CombinedOutput()
	if err != nil {
		t.Fatalf("junitparser could not read %s: %v\n%s", path, err, out)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// TestJUnit runs a matrix with --junit on a real Redis and reads the file as a CI
// system does: a case per sale, failed where --fail-on fails it with the verdict, its
// first violation and the command that reruns it, skipped where the fault never struck,
// passed where the sale held; and check's thresholds fail the case of the sale that
// broke one. Bad input for --junit is one line, exit 2, and nothing written. Every
// outcome here is certain: lua cannot oversell and term-holder never strikes a built-in
// design (TestExitStatus says why none's 60 buyers on 20 units always oversell).
func TestJUnit(t *testing.T) {
	t.Parallel()
	small := []string{"--buyers", "60", "--stock", "20", "--think", "2ms"}
	dir := t.TempDir()
	path := filepath.Join(dir, "matrix.xml")
	code, stdout, stderr := stockbench(t, append([]string{"matrix", "--locks", "lua,none", "--faults", "none,term-holder", "--queues", "",
		"--scenarios", "flash-sale", "--fail-on", "OVERSOLD,LOST", "--junit", path, "--out", t.TempDir()}, small...)...)
	if code != bench.ExitFailed {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, stdout, stderr)
	}
	lines := readJUnit(t, path)
	want := []string{
		"flash-sale.lua\tnone\tpassed\t",
		"flash-sale.none\tnone\tfailure\tOVERSOLD ",
		"flash-sale.lua\tterm-holder\tskipped\tnot exercised: term-holder never struck",
		"flash-sale.none\tterm-holder\tfailure\tOVERSOLD ",
		"suite\tstockbench ",
	}
	if len(lines) != len(want) {
		t.Fatalf("want %d lines, got:\n%s", len(want), strings.Join(lines, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d: want %q, got %q", i, w, lines[i])
		}
	}
	for _, w := range []string{"which --fail-on names", "verdict: OVERSOLD", "first violation: ", "rerun: stockbench run --scenario flash-sale --lock none --fault none"} {
		if !strings.Contains(lines[1], w) {
			t.Errorf("the failure wants %q: %s", w, lines[1])
		}
	}
	if !strings.HasSuffix(lines[4], "4 tests\t2 failures\t0 errors\t1 skipped") {
		t.Errorf("suite counts: %s", lines[4])
	}

	// check: a threshold lua cannot meet fails lua's case with the threshold's line.
	runfile := writeFile(t, dir, "stockbench.json", `{"locks": ["lua"], "scenarios": ["flash-sale"], "faults": ["none"],
		"settings": {"buyers": 60, "stock": 20}, "thresholds": {"*": ["sales_per_sec >= 100000000"]}}`)
	cpath := filepath.Join(dir, "check.xml")
	if code, stdout, stderr := stockbench(t, "check", runfile, "--junit", cpath, "--out", t.TempDir()); code != bench.ExitFailed {
		t.Fatalf("check: exit %d, want 1:\n%s\n%s", code, stdout, stderr)
	}
	if lines := readJUnit(t, cpath); len(lines) != 2 || !strings.HasPrefix(lines[0], "flash-sale.lua\tnone\tfailure\t") || !strings.Contains(lines[0], "broken: ") {
		t.Errorf("check: want lua's case failed by its threshold, got:\n%s", strings.Join(lines, "\n"))
	}

	for _, bad := range []string{dir, filepath.Join(dir, "missing", "j.xml")} {
		out := t.TempDir()
		code, _, stderr := stockbench(t, "run", "--lock", "lua", "--junit", bad, "--out", out)
		if entries, _ := os.ReadDir(out); code != bench.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "--junit") || len(entries) > 0 {
			t.Errorf("--junit %s: exit %d, %d entries written, stderr %q; want one line and exit 2", bad, code, len(entries), stderr)
		}
	}
}

// TestAnnotationsPointAtTheRunFile: check --format github points each failed sale's
// annotation at the run file, named from the workflow's workspace, at the line of the
// thresholds it broke; a sale that broke none (a class fail_on names) at the file alone.
func TestAnnotationsPointAtTheRunFile(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFile(t, ws, "stockbench.json", `{
  "locks": ["lua", "none"], "scenarios": ["flash-sale"], "faults": ["none"],
  "settings": {"buyers": 60, "stock": 20, "think": "2ms"},
  "fail_on": ["OVERSOLD"],
  "thresholds": {
    "*": ["oversold >= 0"],
    "lua": ["sales_per_sec >= 100000000"]
  }
}`)
	cmd := exec.Command(binary, "check", "stockbench.json", "--format", "github", "--out", t.TempDir())
	cmd.Dir = ws
	cmd.Env = append(os.Environ(), "GITHUB_WORKSPACE="+filepath.Dir(ws), "GITHUB_STEP_SUMMARY=")
	code, stdout, stderr := runCmd(t, cmd)
	if code != bench.ExitFailed {
		t.Fatalf("exit %d, want 1:\n%s\n%s", code, stdout, stderr)
	}
	file := filepath.Base(ws) + "/stockbench.json"
	for _, want := range []string{
		"::error file=" + file + ",line=7,title=stockbench flash-sale.lua none::flash-sale/lua/none: sales_per_sec >= 100000000",
		"::error file=" + file + ",title=stockbench flash-sale.none none::",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("want an annotation %q in:\n%s", want, stdout)
		}
	}
}
