package report

import (
	"testing"
	"time"

	"github.com/stockbench/stockbench/results"
)

// The recovery plot has a place for every run where a worker died, dots or not.
func TestRecoveryPlot(t *testing.T) {
	l, ok := results.Durations([]time.Duration{370 * time.Millisecond, 380 * time.Millisecond})
	if !ok {
		t.Fatal("no histogram")
	}
	runs := []results.Run{
		{Impl: "stream", Recovery: &results.Recoveries{Deaths: 2, Redelivered: 2}, Latency: map[string]results.Latency{"recovery": l}},
		{Impl: "list", Recovery: &results.Recoveries{Deaths: 3, Never: 3}, Latency: map[string]results.Latency{}},
		{Impl: "lua"}, // no worker died
	}
	p, err := RecoveryPlot("recovery", runs)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Max != 1.5 {
		t.Errorf("want places for 2 runs, got x up to %g", p.X.Max)
	}
	if n := len(p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)); p.Y.Max < 380 || n == 0 {
		t.Errorf("want the y axis to reach 380 ms, got %g", p.Y.Max)
	}
}
