package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestReplayAndShrink: a failing sale prints the command that reruns it; replay reruns
// it from its record and writes how often it earned its class back into that record;
// shrink finds a much smaller sale with the same class, with the holds of its
// violations, and prints that sale's command.
func TestReplayAndShrink(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	// No lock at all, so that the sale's class hangs on no race: seed-setnx's steal, at
	// 5 ms of work, read SAFE once in make test (as it does in make bench's matrix now and
	// then), and this test is not about its rate.
	code, stdout, stderr := stockbench(t, "run", "--lock", "none", "--scenario", "fault-sale", "--think", "5ms", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readRun(t, out, "latency-fault-sale.png")
	r := f.Runs[0]
	if r.Verdict.Class != oracle.ClassOversold || !strings.Contains(stdout, "rerun fault-sale/none/none (OVERSOLD") ||
		!strings.Contains(stdout, "stockbench "+strings.Join(r.Rerun, " ")) || !strings.Contains(stdout, "--seed 1") {
		t.Fatalf("want an oversold sale and the command that reruns it, got %s, %q:\n%s", r.Verdict.Cell(), r.Rerun, stdout)
	}
	dir := filepath.Join(out, f.ID)

	code, stdout, stderr = stockbench(t, "replay", dir, "--times", "2", "--out", t.TempDir())
	if code != 0 {
		t.Fatalf("replay: exit %d:\n%s", code, stderr)
	}
	again, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	// What must hold is the tally, every rerun counted by its class.
	rep := again.Runs[0].Repeats
	tallied := 0
	if rep != nil {
		for _, n := range rep.Classes {
			tallied += n
		}
	}
	if rep == nil || rep.Times != 2 || tallied != 2 || rep.Same != rep.Classes[oracle.ClassOversold] ||
		!strings.Contains(stdout, "fault-sale/none/none: recorded OVERSOLD;") {
		t.Errorf("want 2 reruns tallied into the record, got %+v:\n%s", rep, stdout)
	}

	// Shrink a sale whose class does not hang on a race: no lock at all oversells as soon
	// as two buyers read the stock together. (seed-setnx's steal race shrank from 100
	// buyers to 3 here, but on a loaded machine it may not repeat at 50.)
	none := t.TempDir()
	if code, _, stderr := stockbench(t, "run", "--lock", "none", "--scenario", "fault-sale", "--out", none); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	shrunk := t.TempDir()
	code, stdout, stderr = stockbench(t, "shrink", filepath.Join(none, readRun(t, none, "latency-fault-sale.png").ID), "--out", shrunk)
	if code != 0 {
		t.Fatalf("shrink: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	m := regexp.MustCompile(`smallest: stockbench run .* --buyers (\d+) --stock (\d+) `).FindStringSubmatch(stdout)
	if m == nil {
		t.Fatalf("want the smallest sale's command, got:\n%s", stdout)
	}
	small := readRun(t, shrunk, "latency-fault-sale.png").Runs[0]
	buyers, _ := strconv.Atoi(m[1])
	stock, _ := strconv.Atoi(m[2])
	if buyers > 12 || stock > 3 || small.Params.Buyers != buyers || small.Verdict.Class != oracle.ClassOversold || len(small.Oracle.Violations) == 0 {
		t.Errorf("want at most 12 buyers and 3 units still oversold, with its violations, got %s and %s: %s %+v\n%s", m[1], m[2], small.Verdict.Cell(), small.Oracle.Violations, stderr)
	}

	for _, args := range [][]string{
		{"replay", filepath.Join(out, "nothing-here")},
		{"replay", dir, "--times", "0"},
		{"replay", dir, "--only", "no-such-design"},
		{"shrink", dir, "--only", "no-such-design"},
		{"shrink", dir, "--budget", "0s"},
	} {
		if code, _, stderr := stockbench(t, args...); code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: want exit 2 and one line, got %d: %s", args, code, stderr)
		}
	}
}
