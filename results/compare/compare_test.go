package compare

import (
	"math"
	"testing"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

func hist(t *testing.T, values ...int64) *hdrhistogram.Histogram {
	t.Helper()
	h := hdrhistogram.New(1, 60_000_000, 3)
	for _, v := range values {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// TestMannWhitney checks U and the two-sided p-value against the textbook values
// (scipy.stats.mannwhitneyu, method="asymptotic", use_continuity=False).
func TestMannWhitney(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b []int64
		u, p float64
	}{
		{"apart", []int64{1, 2, 3, 4, 5}, []int64{6, 7, 8, 9, 10}, 25, 0.009023},
		{"apart the other way", []int64{6, 7, 8, 9, 10}, []int64{1, 2, 3, 4, 5}, 0, 0.009023},
		{"ties", []int64{1, 1, 2}, []int64{2, 3, 3}, 8.5, 0.06789},
		{"the same", []int64{5, 6, 7}, []int64{5, 6, 7}, 4.5, 1},
		{"all tied", []int64{4, 4}, []int64{4, 4, 4}, 3, 1},
		{"one empty", nil, []int64{1, 2}, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			u, p := MannWhitney(hist(t, c.a...), hist(t, c.b...))
			if u != c.u || math.Abs(p-c.p) > 5e-5 {
				t.Errorf("U %g p %.6f, want U %g p %.6f", u, p, c.u, c.p)
			}
		})
	}
}

// run is a sale's record with a purchase latency of the given samples.
func run(t *testing.T, impl string, class oracle.Class, damage *results.Rate, samples ...int64) results.Run {
	t.Helper()
	l, err := results.Summarize(hist(t, samples...))
	if err != nil {
		t.Fatal(err)
	}
	return results.Run{Scenario: "fault-sale", Impl: impl, Kind: results.LockSale, Verdict: oracle.Verdict{Class: class},
		Latency: map[string]results.Latency{results.Purchase.String(): l}, DamageRate: damage, SalesPerSec: 100}
}

// spread is n samples around base, every one distinct.
func spread(base int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = base + int64(i%50)*10
	}
	return out
}

// TestRecords: the same sale twice is no shift; a slower one is, with its change; a
// changed class, a sale in one record only and damage intervals apart are said.
func TestRecords(t *testing.T) {
	low, high := &results.Rate{Per10k: 0, Low: 0, High: 100}, &results.Rate{Per10k: 3000, Low: 2000, High: 4000}
	old := &results.File{Runs: []results.Run{
		run(t, "token", oracle.ClassSafe, low, spread(1000, 500)...),
		run(t, "lua", oracle.ClassSafe, low, spread(1000, 500)...),
		run(t, "none", oracle.ClassOversold, high, spread(1000, 500)...),
		run(t, "gone", oracle.ClassSafe, nil, 1),
	}}
	new := &results.File{Runs: []results.Run{
		run(t, "token", oracle.ClassSafe, low, spread(1000, 500)...),
		run(t, "lua", oracle.ClassSafe, low, spread(1300, 500)...),
		run(t, "none", oracle.ClassSafe, low, spread(1000, 500)...),
		run(t, "fresh", oracle.ClassSafe, nil, 1),
	}}
	rows, err := Records(old, new, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("want 5 rows, got %+v", rows)
	}
	same, slower, fixed, fresh, gone := rows[0], rows[1], rows[2], rows[3], rows[4]
	if same.Latency == nil || same.Latency.Significant || same.Latency.P < 0.99 || same.ClassChanged() {
		t.Errorf("the same sale: %+v %+v", same, same.Latency)
	}
	if s := slower.Latency; s == nil || !s.Significant || s.Change() < 0.2 || s.Larger < 0.9 || s.OldN != 500 || s.NewN != 500 {
		t.Errorf("a slower sale: %+v", s)
	}
	if !fixed.ClassChanged() || fixed.Old != oracle.ClassOversold || !fixed.DamageApart() || same.DamageApart() {
		t.Errorf("a fixed sale: %+v", fixed)
	}
	if fresh.Old != "" || fresh.Latency != nil || gone.New != "" || gone.Key != "fault-sale/gone/none" {
		t.Errorf("one record only: %+v, %+v", fresh, gone)
	}
	if _, err := Records(old, new, Options{Alpha: 2}); err == nil {
		t.Error("alpha 2: want an error")
	}
}

// Exceeds' p is the exact one-sided tail of U: five runs all slower than five is 1 of
// the 252 ways to order them; one pair the other way round, 2 of 252; no shift, about
// half.
func TestExceeds(t *testing.T) {
	tests := []struct {
		name string
		a, b []float64
		u, p float64
	}{
		{"all larger", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 25, 1.0 / 252},
		{"one pair not", []float64{1, 2, 3, 4, 7}, []float64{6, 8, 9, 10, 11}, 24, 2.0 / 252},
		{"all smaller", []float64{6, 7, 8, 9, 10}, []float64{1, 2, 3, 4, 5}, 0, 1},
		{"three against three", []float64{1, 2, 3}, []float64{4, 5, 6}, 9, 1.0 / 20},
		{"empty", nil, []float64{1}, 0, 1},
	}
	for _, tt := range tests {
		u, p := Exceeds(tt.a, tt.b)
		if u != tt.u || math.Abs(p-tt.p) > 1e-12 {
			t.Errorf("%s: want U %g p %.5f, got U %g p %.5f", tt.name, tt.u, tt.p, u, p)
		}
	}
	// Interleaved: U is half the pairs, p a little over a half.
	if u, p := Exceeds([]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}); u != 15 || p < 0.3 || p > 0.5 {
		t.Errorf("interleaved: U %g p %.3f", u, p)
	}
}
