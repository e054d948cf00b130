package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/results"
)

// TestCompareCommand: a record against a copy of itself whose one sale came out slower
// and oversold: that sale's row says the class changed and the shift is significant;
// every other sale's says nothing moved.
func TestCompareCommand(t *testing.T) {
	dir := t.TempDir()
	old, err := results.Read("../../baseline/results.json")
	if err != nil {
		t.Fatal(err)
	}
	// The committed baseline is slimmed (no histograms): give two SAFE sales samples.
	const same, slower = 2, 3
	for _, i := range []int{same, slower} {
		if old.Runs[i].Verdict.Class != "SAFE" {
			t.Fatalf("the baseline's sale %d is %s, not SAFE", i, old.Runs[i].Verdict.Class)
		}
		old.Runs[i].Latency = map[string]results.Latency{results.Purchase.String(): latency(t, 1000)}
	}
	new := *old
	new.Runs = append([]results.Run(nil), old.Runs...)
	new.Runs[slower].Latency = map[string]results.Latency{results.Purchase.String(): latency(t, 2000)}
	// Every run of the slower sale twice as slow as every run before.
	if old.Runs[slower].Spread == nil || len(old.Runs[slower].Spread.P50Us) != 5 {
		t.Fatalf("the baseline's sale %d keeps no spread of 5 runs", slower)
	}
	doubled := results.Spread{}
	for i, p := range old.Runs[slower].Spread.P50Us {
		doubled.P50Us = append(doubled.P50Us, 2*p)
		doubled.SalesPerSec = append(doubled.SalesPerSec, old.Runs[slower].Spread.SalesPerSec[i]/2)
	}
	new.Runs[slower].Spread = &doubled
	worse := new.Runs[slower].Verdict
	worse.Class = "OVERSOLD"
	new.Runs[slower].Verdict = worse
	for name, f := range map[string]*results.File{"old.json": old, "new.json": &new} {
		if err := results.WriteFile(filepath.Join(dir, name), f); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := cli(context.Background(), []string{"compare", filepath.Join(dir, "old.json"), filepath.Join(dir, "new.json")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if len(lines) != 3+len(old.Runs) || !strings.HasPrefix(lines[len(lines)-1], "exit 0: ") {
		t.Fatalf("want a row per sale, got:\n%s", stdout.String())
	}
	if row := lines[2+same]; !strings.Contains(row, " ~ (p=1, n=300+300)") {
		t.Errorf("an unchanged sale: %q", row)
	}
	if row := lines[2+same]; !strings.Contains(row, "~ (p=1), ~ (p=1), 5+5") {
		t.Errorf("an unchanged sale's runs: %q", row)
	}
	if row := lines[2+slower]; !strings.Contains(row, "SAFE -> OVERSOLD") || !strings.Contains(row, "+99% (p=") ||
		!strings.Contains(row, "+100% (p=0.00794), -50% (p=0.00794), 5+5") {
		t.Errorf("the slower, oversold sale: %q", row)
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"compare", "../../baseline/results.json"}, "compare: name two run directories or results files"},
		{[]string{"compare", "../../baseline/results.json", "results/runs/none-such"}, "no such run directory or results file"},
		{[]string{"compare", "../../baseline/results.json", "../../baseline/results.json", "--alpha", "1.5"}, "alpha must be between 0 and 1"},
	} {
		var stdout, stderr bytes.Buffer
		code := cli(context.Background(), bad.args, &stdout, &stderr)
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), bad.want) || stdout.Len() > 0 {
			t.Errorf("%v: want exit 2 and one line with %q, got %d: %s%s", bad.args, bad.want, code, stdout.String(), stderr.String())
		}
	}
}

// latency is a purchase latency of 300 samples around base µs.
func latency(t *testing.T, base int64) results.Latency {
	t.Helper()
	r := results.NewRecorder(1)
	for i := range int64(300) {
		r.Record(0, results.Purchase, time.Duration(base+i%30)*time.Microsecond)
	}
	l, err := results.Summarize(r.Histogram(results.Purchase))
	if err != nil {
		t.Fatal(err)
	}
	return l
}
