package report

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestFit: a table that fits is aligned; one wider than the terminal becomes a record
// per row within its width; no terminal (width 0) keeps every row on one line.
func TestFit(t *testing.T) {
	tab := Table{Heads: []string{"NAME", "WHAT", "UNDER"}, Title: 1, Plain: 1, Caption: "DESIGNS",
		Rows: [][]string{{"token", "SET key token NX PX ttl; Lua compare-and-delete", "slow-work, client-pause, redis-pause, failover"}}}
	tests := []struct {
		width int
		want  string
	}{
		{0, "NAME   WHAT                                             UNDER\ntoken  SET key token NX PX ttl; Lua compare-and-delete  slow-work, client-pause, redis-pause, failover\n"},
		{200, "NAME   WHAT                                             UNDER\ntoken  SET key token NX PX ttl; Lua compare-and-delete  slow-work, client-pause, redis-pause, failover\n"},
		{40, "DESIGNS\ntoken\n    SET key token NX PX ttl; Lua\n    compare-and-delete\n    UNDER: slow-work, client-pause,\n    redis-pause, failover\n"},
	}
	for _, tt := range tests {
		var b strings.Builder
		if err := tab.Fit(&b, tt.width); err != nil {
			t.Fatal(err)
		}
		if b.String() != tt.want {
			t.Errorf("width %d:\n%s\nwant:\n%s", tt.width, b.String(), tt.want)
		}
	}
}

// TestWriteReportFits: a run's terminal report, matrix and table, on an 80-column
// terminal has no line wider than 80.
func TestWriteReportFits(t *testing.T) {
	var runs []results.Run
	for _, impl := range []string{"set-nx-ex", "token-watchdog"} {
		for _, f := range []string{"none", "client-pause:p=0.01:dist=exp", "redis-restart:persist=aof-everysec"} {
			r := results.Run{Scenario: "fault-sale", Impl: impl, Complete: true, Params: results.Params{Faults: f},
				Verdict: oracle.Verdict{Class: oracle.ClassOversold, Count: 12, Broken: true}, Latency: map[string]results.Latency{}}
			runs = append(runs, r)
		}
	}
	one := runs[0]
	one.Scenario = "headline"
	runs = append(runs, one)
	var b strings.Builder
	WriteReport(&b, runs, 80)
	for l := range strings.SplitSeq(b.String(), "\n") {
		if utf8.RuneCountInString(l) > 80 {
			t.Errorf("a line wider than 80: %q", l)
		}
	}
	for _, want := range []string{"fault-sale, by design and fault:\nset-nx-ex\n    none: OVERSOLD 12 BROKEN", "headline  set-nx-ex  none\n    VERDICT: "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("want %q in:\n%s", want, b.String())
		}
	}
}
