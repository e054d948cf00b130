package gate

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// pairsOf builds pairs of one row, "flash-sale/token/none", from the base's and the
// change's median latencies, pair by pair; sales/s move inversely.
func pairsOf(base, change []float64) []Pair {
	var out []Pair
	for i := range base {
		out = append(out, Pair{
			Base:   Trial{"flash-sale/token/none": {P50Us: base[i], SalesPerSec: 1e6 / base[i]}},
			Change: Trial{"flash-sale/token/none": {P50Us: change[i], SalesPerSec: 1e6 / change[i]}},
		})
	}
	return out
}

// TestJudgePairs: a slowdown every pair shows, beyond the effect, regresses; the same
// build twice, a slowdown the pairs disagree on, and one below the effect do not.
func TestJudgePairs(t *testing.T) {
	g := Rules{Alpha: 0.01, MinEffect: 0.1}
	// A busy machine: the base's latency wanders by 3x from pair to pair, and both builds
	// of a pair move together.
	load := []float64{100, 180, 95, 300, 120, 250, 110, 140}
	scaled := func(f ...float64) []float64 {
		out := slices.Clone(load)
		for i := range out {
			out[i] *= f[i%len(f)]
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		change    []float64
		regressed bool
	}{
		{"the same build: pairs within 5% either way", scaled(1.03, 0.97, 1.05, 0.96, 1.0, 1.02, 0.98, 0.99), false},
		{"one more round trip: +30% in every pair", scaled(1.28, 1.33, 1.30, 1.25, 1.35, 1.31, 1.27, 1.32), true},
		{"+30% on average, but pairs disagree", scaled(2.2, 0.8, 1.9, 0.7, 1.1, 2.0, 0.75, 0.9), false},
		{"+5% in every pair: below the effect", scaled(1.05, 1.04, 1.06, 1.05, 1.05, 1.04, 1.06, 1.05), false},
		{"faster in every pair", scaled(0.7, 0.72, 0.68, 0.71, 0.7, 0.69, 0.7, 0.71), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := JudgePairs(pairsOf(load, tc.change), g)
			if len(rows) != 2 || rows[0].Metric != "p50" || rows[1].Metric != "sales/s" {
				t.Fatalf("rows %+v: want p50 and sales/s of one row", rows)
			}
			for _, r := range rows {
				if r.Regressed != tc.regressed {
					t.Errorf("%s: regressed %v (slowdown %+.3f, %+.3f to %+.3f, p %.3g, Holm %.3g), want %v",
						r.Metric, r.Regressed, r.Slowdown, r.Low, r.High, r.P, r.Holm, tc.regressed)
				}
				if r.Low > r.Slowdown || r.Slowdown > r.High {
					t.Errorf("%s: slowdown %+.3f outside its interval %+.3f to %+.3f", r.Metric, r.Slowdown, r.Low, r.High)
				}
			}
		})
	}
}

// TestJudgePairsRows: a row some trial did not measure is not judged, an ignored one
// neither, and the p-values are adjusted over every row judged.
func TestJudgePairsRows(t *testing.T) {
	g := Rules{Alpha: 0.01, MinEffect: 0.1, Ignore: []string{"*/redlock/*"}}
	var pairs []Pair
	for i := range 6 {
		base := Trial{
			"flash-sale/lua/none":     {P50Us: 100, SalesPerSec: 900},
			"flash-sale/token/none":   {P50Us: 100 + float64(i), SalesPerSec: 900},
			"flash-sale/redlock/none": {P50Us: 100, SalesPerSec: 900},
		}
		change := Trial{
			"flash-sale/lua/none":     {P50Us: 100 + float64(i%2), SalesPerSec: 900},
			"flash-sale/token/none":   {P50Us: 150 + float64(i), SalesPerSec: 600},
			"flash-sale/redlock/none": {P50Us: 400, SalesPerSec: 100},
		}
		if i == 3 {
			base["queue-sale/list/none"] = Speed{P50Us: 50, SalesPerSec: 2000}
			change["queue-sale/list/none"] = Speed{P50Us: 500, SalesPerSec: 200}
		}
		pairs = append(pairs, Pair{Base: base, Change: change})
	}
	if rows := JudgePairs(nil, g); rows != nil {
		t.Errorf("no pairs judged %v, want no rows", rows)
	}
	rows := JudgePairs(pairs, g)
	var got []string
	for _, r := range rows {
		got = append(got, r.Key+" "+r.Metric)
		if r.Holm < r.P {
			t.Errorf("%s %s: Holm %.3g below its p %.3g", r.Key, r.Metric, r.Holm, r.P)
		}
		if want := r.Key == "flash-sale/token/none"; r.Regressed != want {
			t.Errorf("%s %s: regressed %v, want %v", r.Key, r.Metric, r.Regressed, want)
		}
	}
	want := []string{"flash-sale/lua/none p50", "flash-sale/lua/none sales/s", "flash-sale/token/none p50", "flash-sale/token/none sales/s"}
	if !slices.Equal(got, want) {
		t.Errorf("rows judged %q, want %q", got, want)
	}
	var b strings.Builder
	if n := WritePaired(&b, rows, g); n != 2 || !strings.Contains(b.String(), "| flash-sale/token/none | sales/s | 6 | -33.3% (") {
		t.Errorf("WritePaired counted %d regressions, want 2; wrote\n%s", n, b.String())
	}
}

// TestJudgePairsCounts: the commands Redis ran per sale regress by an amount, not a
// share: one more round trip on every purchase's path, every pair, is flagged however
// the times wander; the same build's counts, a contended row's counts that wander by
// more than a round trip from trial to trial, and a rise below MinCommands are not.
func TestJudgePairsCounts(t *testing.T) {
	g := Rules{Alpha: 0.01, MinEffect: 0.2, MinCommands: 0.5}
	load := []float64{100, 180, 95, 300, 120, 250}
	for _, tc := range []struct {
		name         string
		base, change []float64
		regressed    bool
		rise         float64
	}{
		{"the same build, one purchase at a time", []float64{7, 7, 7, 7, 7, 7}, []float64{7, 7, 7, 7, 7, 7}, false, 0},
		{"one more round trip, one purchase at a time", []float64{7, 7, 7, 7, 7, 7}, []float64{8, 8, 8, 8, 8, 8}, true, 1},
		{"a lock design's script loaded once in some trials", []float64{4, 4.3, 4, 4, 4.3, 4}, []float64{4.3, 4, 4.3, 4.3, 4, 4.3}, false, 0.1},
		{"a race's retries, the same build", []float64{39.7, 36.5, 41.2, 38.0, 44.1, 37.3}, []float64{41.9, 35.2, 44.0, 37.1, 40.3, 42.8}, false, 0.75},
		{"a third of a command more every pair: below MinCommands", []float64{7, 7, 7, 7, 7, 7}, []float64{7.3, 7.3, 7.3, 7.3, 7.3, 7.3}, false, 0.3},
		{"a round trip fewer", []float64{8, 8, 8, 8, 8, 8}, []float64{7, 7, 7, 7, 7, 7}, false, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pairs []Pair
			for i := range tc.base {
				pairs = append(pairs, Pair{
					Base:   Trial{"one at a time: flash-sale/token/none": {P50Us: load[i], SalesPerSec: 1e6 / load[i], CmdsPerSale: tc.base[i]}},
					Change: Trial{"one at a time: flash-sale/token/none": {P50Us: load[i], SalesPerSec: 1e6 / load[i], CmdsPerSale: tc.change[i]}},
				})
			}
			rows := JudgePairs(pairs, g)
			if len(rows) != 3 || rows[2].Metric != "cmds/sale" {
				t.Fatalf("rows %+v: want p50, sales/s and cmds/sale", rows)
			}
			r := rows[2]
			if r.Regressed != tc.regressed || math.Abs(r.Rise-tc.rise) > 1e-9 {
				t.Errorf("regressed %v, rise %+.3f (p %.3g, Holm %.3g); want %v, %+.3f", r.Regressed, r.Rise, r.P, r.Holm, tc.regressed, tc.rise)
			}
			var b strings.Builder
			if n := WritePaired(&b, rows, g); n != map[bool]int{true: 1}[tc.regressed] || !strings.Contains(b.String(), fmt.Sprintf("%+.2f a sale", tc.rise)) {
				t.Errorf("WritePaired counted %d regressions; wrote\n%s", n, b.String())
			}
		})
	}
}

// TestOrder: the order of the pairs is the seed's, and both orders occur.
func TestOrder(t *testing.T) {
	a, b := Order(20, 7), Order(20, 7)
	if !slices.Equal(a, b) || len(a) != 20 {
		t.Fatalf("Order(20, 7) gave %v, then %v", a, b)
	}
	if !slices.Contains(a, true) || !slices.Contains(a, false) {
		t.Errorf("Order(20, 7) = %v: one build always first", a)
	}
	if slices.Equal(a, Order(20, 8)) {
		t.Errorf("seeds 7 and 8 drew the same order")
	}
}
