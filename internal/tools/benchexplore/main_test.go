package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/internal/tools/exploreproc"
	"github.com/stockbench/stockbench/results"
)

// Bad input is one line and exit 2, before anything is built.
func TestBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "BASE=ref names the build"},
		{[]string{"-base", "HEAD", "-seeds", "one"}, `seed "one" is not a number`},
		{[]string{"-base", "HEAD", "-seeds", " "}, "no seed"},
		{[]string{"-base", "HEAD", "-budget", "5s"}, "too short to explore"},
		{[]string{"-base", "HEAD", "-args", `--lock "token`}, "the exploration's arguments"},
		{[]string{"-base", "no-such-ref-here", "-seeds", "1"}, "--base no-such-ref-here: not a commit"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tt.args, &stdout, &stderr)
		if code != bench.ExitUsage || !strings.Contains(stderr.String(), tt.want) || strings.Count(stderr.String(), "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tt.args, code, stdout.String(), stderr.String(), tt.want)
		}
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := parse([]string{"-base", "c8dd377", "-seeds", "1 2,3"})
	if err != nil {
		t.Fatal(err)
	}
	if c.budget != 3*time.Minute || len(c.seeds) != 3 || c.seeds[2] != 3 || strings.Join(c.args, " ") != "--lock set-nx-ex --lock token" || c.redis != "process" {
		t.Errorf("defaults: %+v", c)
	}
}

// The table and the ratios: seed by seed, whichever build ran first, and a change that
// measured nothing shows as 0, not left out of the mean.
func TestWrite(t *testing.T) {
	regions := func(measured, not int) []*explore.Finding {
		var fs []*explore.Finding
		for range measured {
			fs = append(fs, &explore.Finding{Smallest: results.Sale{Design: "token"}})
		}
		for range not {
			fs = append(fs, &explore.Finding{})
		}
		return fs
	}
	trials := []trial{
		{build: "base", seed: 1, Run: exploreproc.Run{Idle: 0.25, Report: explore.Report{Draws: 20, Sales: 190, SalesPerMinute: 60, Findings: regions(4, 6)}}},
		{build: "change", seed: 1, Run: exploreproc.Run{Idle: 0.5, Report: explore.Report{Draws: 40, Sales: 300, SalesPerMinute: 90, Findings: regions(8, 0)}}},
		{build: "change", seed: 2, Run: exploreproc.Run{Idle: -1, Report: explore.Report{Draws: 30, Sales: 200, SalesPerMinute: 120, Findings: regions(0, 2)}}},
		{build: "base", seed: 2, Run: exploreproc.Run{Idle: 0.2, Report: explore.Report{Draws: 20, Sales: 180, SalesPerMinute: 60, Findings: regions(2, 0)}}},
	}
	var b bytes.Buffer
	write(&b, config{base: "c8dd377", budget: 3 * time.Minute, args: []string{"--lock", "a"}}, "0123456789abcdef", trials)
	out := b.String()
	for _, want := range []string{
		"base c8dd377 (0123456789ab)",
		"| 1 | base | 20 | 10 | 4 | 6 | 190 | 60.0 | 25% |",
		"| 2 | change | 30 | 2 | 0 | 2 | 200 | 120.0 | - |",
		"| 1 | 2.00 | 1.50 |",
		"| 2 | 0.00 | 2.00 |",
		"| all (geometric mean) | 0.00 | 1.73 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
