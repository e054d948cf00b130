package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/internal/tools/exploreproc"
)

func TestBadInput(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stockbench")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"-bin", bin, "-seeds", "0"}, "0 seeds: from 1 to 20"},
		{[]string{"-bin", bin, "-pairs", "aa,nope"}, `unknown pair "nope"`},
		{[]string{"-bin", bin, "-pairs", ","}, "no pair"},
		{[]string{"-bin", filepath.Join(t.TempDir(), "none")}, "no stockbench binary"},
		{[]string{"-bin", bin, "-sedes", "3"}, "flag provided but not defined"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != bench.ExitUsage || !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and one line with %q", tt.args, code, stderr.String(), tt.want)
		}
	}
}

// A pair's rate against its target: a difference told apart in enough seeds, an A/A in
// few enough; a significant comparison anywhere tells a run apart.
func TestWrite(t *testing.T) {
	apart := func(yes bool) exploreproc.Run {
		f := &explore.Finding{Comparisons: []explore.Comparison{{Kind: "LOCK-BROKEN", Significant: yes}}}
		return exploreproc.Run{Idle: 0.3, Report: explore.Report{Draws: 60, Faults: []string{"a", "b"}, Struck: map[string]int{"a": 3, "b": 2}, Findings: []*explore.Finding{f}}}
	}
	for _, tt := range []struct {
		p    pair
		runs []bool
		want string
	}{
		{pairs[1], []bool{true, true, true, true, true}, "told apart in 5 of 5 seeds (target at least 5 of 5: met)"},
		{pairs[1], []bool{true, false, true, true, true}, "told apart in 4 of 5 seeds (target at least 5 of 5: NOT met)"},
		{pairs[0], []bool{true, false, true, true, true}, "told apart in 4 of 5 seeds (target at least 4 of 5: met)"},
		{pairs[0], []bool{true, false}, "told apart in 1 of 2 seeds (target at least 2 of 2: NOT met)"},
		{pairs[2], []bool{false, false, false, false, false}, "told apart in 0 of 5 seeds (target at most 0 of 5: met)"},
		{pairs[2], []bool{false, true, false}, "told apart in 1 of 3 seeds (target at most 0 of 3: NOT met)"},
	} {
		var runs []exploreproc.Run
		for _, y := range tt.runs {
			runs = append(runs, apart(y))
		}
		var b bytes.Buffer
		write(&b, tt.p, runs)
		if !strings.Contains(b.String(), tt.want) || !strings.Contains(b.String(), "| 1 of 2 | 1 |") {
			t.Errorf("%s %v: want %q and the faults struck, got\n%s", tt.p.Name, tt.runs, tt.want, b.String())
		}
	}
}
