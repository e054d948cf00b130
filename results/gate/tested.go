package gate

import (
	"fmt"
	"slices"

	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/compare"
)

// minRuns is the fewest runs of a sale on each side the test takes: with three against
// three, a shift seen in every pair is p = 0.05, which no alpha worth the name passes.
const minRuns = 3

// spreadOf is a run's figures per run of it: its Spread, or nil with fewer than minRuns.
func spreadOf(r *results.Run) *results.Spread {
	if r == nil || r.Spread == nil || len(r.Spread.P50Us) < minRuns {
		return nil
	}
	return r.Spread
}

// tested holds r's speed to b's by the spread of their runs: a regression is a median
// latency that rose, or sales/s that fell, by more than MinEffect, as ratios to the
// reference's median in the same file, and significantly (Mann-Whitney over the runs,
// one-sided, below Alpha). ok is false when either side has no spread: the tolerances
// judge it then.
func tested(key string, r, b, rref, bref *results.Run, ref string, g Rules) (regs []string, ok bool) {
	cs, bs := spreadOf(r), spreadOf(b)
	if cs == nil || bs == nil {
		return nil, false
	}
	unit := ""
	// The reference's median over its runs: one slow run of it moves no ratio.
	scale := func(ref *results.Run, pick func(*results.Spread) []float64, own func(*results.Run) float64) float64 {
		if ref == nil {
			return 1
		}
		if s := spreadOf(ref); s != nil {
			return compare.Median(pick(s))
		}
		return own(ref)
	}
	if rref != nil && bref != nil {
		unit = "× " + ref
	} else {
		rref, bref = nil, nil
	}
	p50s := func(s *results.Spread) []float64 {
		out := make([]float64, len(s.P50Us))
		for i, v := range s.P50Us {
			out[i] = float64(v)
		}
		return out
	}
	rates := func(s *results.Spread) []float64 { return s.SalesPerSec }
	ownP50 := func(r *results.Run) float64 { _, l := r.MainLatency(); return float64(l.P50Us) }
	ownRate := func(r *results.Run) float64 { return r.SalesPerSec }

	for _, m := range []struct {
		name   string
		pick   func(*results.Spread) []float64
		own    func(*results.Run) float64
		higher bool // higher is better
	}{{"p50", p50s, ownP50, false}, {"sales/s", rates, ownRate, true}} {
		cur, base := ratios(m.pick(cs), scale(rref, m.pick, m.own)), ratios(m.pick(bs), scale(bref, m.pick, m.own))
		if slices.Contains(cur, 0) || slices.Contains(base, 0) {
			continue
		}
		cm, bm := compare.Median(cur), compare.Median(base)
		change := cm/bm - 1
		var p float64
		if m.higher {
			_, p = compare.Exceeds(cur, base) // base above cur: a fall
		} else {
			_, p = compare.Exceeds(base, cur) // cur above base: a rise
		}
		worse := m.higher && change < -g.MinEffect || !m.higher && change > g.MinEffect
		if worse && p < g.Alpha {
			regs = append(regs, fmt.Sprintf("%s: %s %s (%.3g%s) vs baseline %s (%.3g%s), medians of %d and %d runs: %+.0f%%, beyond the %.0f%% effect; Mann-Whitney p=%.3g",
				key, m.name, fmtMetric(m.name, compare.Median(m.pick(cs))), cm, unit, fmtMetric(m.name, compare.Median(m.pick(bs))), bm, unit,
				len(cur), len(base), 100*change, 100*g.MinEffect, p))
		}
	}
	return regs, true
}

// ratios is vs divided by by.
func ratios(vs []float64, by float64) []float64 {
	out := make([]float64, len(vs))
	for i, v := range vs {
		if by > 0 {
			out[i] = v / by
		}
	}
	return out
}
