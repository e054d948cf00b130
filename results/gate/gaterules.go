package gate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// severity orders the classes of harm, most severe first.
var severity = func() []oracle.Class {
	c := oracle.Classes()[1:] // SAFE is no harm
	slices.Reverse(c)
	return c
}()

// allows reports whether the documented classes admit harm of class c: one of them is
// at least as severe (an oversold lock also overlaps).
func allows(expected []oracle.Class, c oracle.Class) bool {
	rank := slices.Index(severity, c)
	return slices.ContainsFunc(expected, func(e oracle.Class) bool {
		i := slices.Index(severity, e)
		return i >= 0 && i <= rank
	})
}

// rerun is the classes the baseline's sale earned when replay reran it: a sale that is a
// race (the headline's, under a pause rate) admits, beside its documentation, the harm
// its own reruns showed, rather than failing every gate whose run lands on the other side.
func rerun(b *results.Run) []oracle.Class {
	var cs []oracle.Class
	if b.Repeats != nil {
		cs = slices.Collect(maps.Keys(b.Repeats.Classes))
	}
	if b.Draws != nil { // its draws with other seeds (--runs) likewise
		cs = append(cs, slices.Collect(maps.Keys(b.Draws.Classes))...)
	}
	return cs
}

// rateAlpha is the two-sided p-value under which rateGates counts a finding's rise
// between two sales run with several seeds significant.
const rateAlpha = 0.01

// rateGates: where both sales ran with several seeds (--runs), a kind of finding whose
// rate rose significantly (Fisher's exact test): a race that now strikes more often,
// which no single draw, nor the worst of several, tells from chance.
func rateGates(key string, r, b *results.Run) []string {
	if r.Draws == nil || b.Draws == nil || r.Draws.Runs < 2 || b.Draws.Runs < 2 {
		return nil
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(r.Draws.Findings)) {
		kr, kb := r.Draws.Findings[k], b.Draws.Findings[k]
		if float64(kr)/float64(r.Draws.Runs) <= float64(kb)/float64(b.Draws.Runs) {
			continue
		}
		if p := results.FisherExact(kr, r.Draws.Runs, kb, b.Draws.Runs); p < rateAlpha {
			out = append(out, fmt.Sprintf("%s: %s in %d of %d draws, the baseline's %d of %d (Fisher's exact test, p=%.2g)",
				key, k, kr, r.Draws.Runs, kb, b.Draws.Runs, p))
		}
	}
	return out
}

// hardGates: harm where the design is documented safe, or where the baseline had none
// and neither the documentation nor the baseline's reruns admit it; and a sale that did
// not finish. Harm at the machine's pace (results.Run.Outpaced; stock a fault sale left
// unsold, Run.Paced) is a note.
func hardGates(key string, r, b *results.Run) (out, notes []string) {
	if !r.Complete {
		out = append(out, fmt.Sprintf("%s: the sale did not finish (%s)", key, or(r.Error, "interrupted")))
	}
	if len(r.NotExercised) > 0 && !slices.Contains(r.Expected, oracle.ClassNotExercised) {
		out = append(out, fmt.Sprintf("%s: %s never struck, so the sale says nothing about it (%s)",
			key, strings.Join(r.NotExercised, ", "), r.Verdict))
	}
	safe := len(r.Expected) == 1 && r.Expected[0] == oracle.ClassSafe
	var harm []string // what would fail the gate
	for _, c := range severity {
		n := r.Damage(c)
		switch {
		case n == 0:
		case safe:
			harm = append(harm, fmt.Sprintf("%s %d where the design is documented SAFE", c, n))
		case b != nil && b.Damage(c) == 0 && !allows(r.Expected, c) && !allows(rerun(b), c):
			if c == oracle.ClassStuck && r.Paced() {
				notes = append(notes, fmt.Sprintf("%s: %d units unsold where the baseline sold out, its sales going on until the buyers' %s patience ran out, and no lock left behind: the machine's pace, not a stuck lock; gate --base judges speed (%s)",
					key, n, r.Params.RetryTimeout, r.Verdict))
				continue
			}
			harm = append(harm, fmt.Sprintf("%s %d where the baseline had none", c, n))
		}
	}
	if len(harm) == 0 {
		return out, notes
	}
	if why := r.Outpaced(); why != "" {
		return out, append(notes, fmt.Sprintf("%s: %s, but %s (%s)", key, strings.Join(harm, ", "), why, r.Verdict))
	}
	for _, h := range harm {
		out = append(out, fmt.Sprintf("%s: %s (%s)", key, h, r.Verdict))
	}
	return out, notes
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// metric is a figure soft gates compare: higher is better for throughput, worse for
// latency.
type metric struct {
	name   string
	value  func(*results.Run) (float64, bool)
	higher bool
	limit  func(Rules) float64
}

var metrics = []metric{
	{"sales/s", func(r *results.Run) (float64, bool) { return r.SalesPerSec, r.SalesPerSec > 0 }, true,
		func(g Rules) float64 { return g.MaxThroughputDrop }},
	{"p99", percentile(func(l results.Latency) int64 { return l.P99Us }), false, func(g Rules) float64 { return g.MaxP99Rise }},
	{"p99.9", percentile(func(l results.Latency) int64 { return l.P999Us }), false, func(g Rules) float64 { return g.MaxP999Rise }},
}

// percentile reads one percentile of the run's main latency, in µs.
func percentile(at func(results.Latency) int64) func(*results.Run) (float64, bool) {
	return func(r *results.Run) (float64, bool) {
		_, l := r.MainLatency()
		return float64(at(l)), l.Count > 0 && at(l) > 0
	}
}

// softGates compare throughput and tail latency with the baseline, as ratios to the
// reference design in the same file when there is one.
func softGates(key string, r, b *results.Run, cur, base *results.File, g Rules) (regs, notes []string) {
	if r.FaultPlan() != faults.None && !g.SoftUnderFaults || !r.Complete || !b.Complete {
		return nil, nil
	}
	ref := g.reference(r)
	if ref != "" && r.Impl == ref {
		return nil, nil
	}
	var rref, bref *results.Run
	if ref != "" {
		rref, bref = find(cur, r, ref), find(base, b, ref)
		if rref == nil || bref == nil {
			notes = append(notes, fmt.Sprintf("%s: no %s run beside it in both files; soft gates compare absolute figures", key, ref))
		}
	}
	if !enoughSamples(g.MinSamples, r, b, rref, bref) {
		return nil, notes
	}
	if g.Soft == SoftTest {
		if regs, ok := tested(key, r, b, rref, bref, ref, g); ok {
			return regs, notes
		}
		notes = append(notes, fmt.Sprintf("%s: run once on a side (no --repeat spread); the tolerances judge its speed", key))
	}
	for _, m := range metrics {
		cv, ok1 := m.value(r)
		bv, ok2 := m.value(b)
		if !ok1 || !ok2 {
			continue
		}
		cn, bn, unit := cv, bv, ""
		if rref != nil && bref != nil {
			cr, ok3 := m.value(rref)
			br, ok4 := m.value(bref)
			if !ok3 || !ok4 {
				continue
			}
			cn, bn, unit = cv/cr, bv/br, "× "+ref
		}
		change := cn/bn - 1
		limit := m.limit(g)
		const eps = 1e-9 // a change of exactly the tolerance passes
		bad := m.higher && change < -limit-eps || !m.higher && change > limit+eps
		if bad {
			regs = append(regs, fmt.Sprintf("%s: %s %s (%.3g%s) vs baseline %s (%.3g%s): %+.0f%%, tolerance %s%.0f%%",
				key, m.name, fmtMetric(m.name, cv), cn, unit, fmtMetric(m.name, bv), bn, unit, 100*change, sign(m.higher), 100*limit))
		}
	}
	return regs, notes
}

// enoughSamples: every run has at least min samples of its main latency, one per sale; a
// 30-unit sale's sales/s and p99 are noise.
func enoughSamples(min int64, runs ...*results.Run) bool {
	for _, r := range runs {
		if r == nil {
			continue
		}
		if _, l := r.MainLatency(); l.Count < min {
			return false
		}
	}
	return true
}

func sign(higher bool) string {
	if higher {
		return "-"
	}
	return "+"
}

func fmtMetric(name string, v float64) string {
	if strings.HasPrefix(name, "p") {
		return results.FormatMicros(int64(v))
	}
	return fmt.Sprintf("%.0f", v)
}

// find is the run of impl in f with r's scenario and fault plan.
func find(f *results.File, r *results.Run, impl string) *results.Run {
	for i := range f.Runs {
		o := &f.Runs[i]
		if o.Impl == impl && o.Subject() == r.Subject() && o.FaultPlan() == r.FaultPlan() {
			return o
		}
	}
	return nil
}
