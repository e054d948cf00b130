package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// The Pareto view: each design's damage per 10,000 sales against its sales/s, for one
// sale, and a line that reads it. It shows the headline sale when the runs have one (make
// bench's), else the largest sale that two designs or more ran under one fault plan.

// headline is the preset the view prefers.
const headline = "headline"

// paretoGroup is the sale the view compares, if any.
func paretoGroup(runs []results.Run) (Group, bool) {
	var best Group
	size := func(g Group) int { return g.Runs[0].Params.Buyers }
	for _, g := range Groups(runs) {
		if len(g.Runs) < 2 || g.Runs[0].Kind == results.QueueSale || g.Runs[0].Sweep != nil {
			continue
		}
		switch {
		case best.Runs == nil, g.Scenario == headline && best.Scenario != headline,
			best.Scenario != headline && size(g) > size(best):
			best = g
		}
	}
	return best, best.Runs != nil
}

// ParetoPlot is damage per 10,000 sales (with its 95% interval) against sales/s, one
// labelled point per design; designs that sold nothing have no rate and are left out.
func ParetoPlot(title string, runs []results.Run) (*plot.Plot, error) {
	var pts paretoPoints
	for i := range runs {
		if r := runs[i].DamageRate; r != nil {
			pts = append(pts, paretoPoint{runs[i].Label(), max(runs[i].SalesPerSec, 0.1), r.Per10k, r.Low, r.High})
		}
	}
	if len(pts) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "sales/s (log)"
	p.Y.Label.Text = "damage per 10,000 sales (95% interval)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	// One colour and shape per design, named in a legend: labels beside the points
	// printed over each other (designs of like speed and damage) and over the bars.
	top := 0.0
	for i, pt := range pts {
		one := pts[i : i+1]
		s, err := plotter.NewScatter(one)
		if err != nil {
			return nil, fmt.Errorf("report: pareto: %w", err)
		}
		s.GlyphStyle.Radius = vg.Points(4)
		s.GlyphStyle.Color, s.GlyphStyle.Shape = plotutil.Color(i), plotutil.Shape(i)
		bars, err := plotter.NewYErrorBars(one)
		if err != nil {
			return nil, fmt.Errorf("report: pareto: %w", err)
		}
		bars.LineStyle.Color = plotutil.Color(i)
		p.Add(s, bars)
		p.Legend.Add(pt.name, s)
		top = max(top, pt.hi)
	}
	p.Legend.Top = true
	p.Y.Min = 0
	// Headroom above the highest bar for the legend, a line per design.
	p.Y.Max = max(top, 1) * (1.2 + 0.08*float64(len(pts)))
	logRange(&p.X)
	p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	return p, nil
}

type paretoPoint struct {
	name                  string
	sales, per10k, lo, hi float64
}

type paretoPoints []paretoPoint

func (ps paretoPoints) Len() int                    { return len(ps) }
func (ps paretoPoints) XY(i int) (float64, float64) { return ps[i].sales, ps[i].per10k }
func (ps paretoPoints) YError(i int) (float64, float64) {
	return ps[i].per10k - ps[i].lo, ps[i].hi - ps[i].per10k
}

// ParetoReading reads the view in a line, from the same verdicts as the matrix cells:
// the designs that found nothing at this traffic and the fastest of them; those a fault
// never struck; those whose findings left the stock intact, and those that did damage,
// each with what its verdict meant for the sale.
func ParetoReading(runs []results.Run) string {
	var safe, idle, intact, damaged, unknown, none []*results.Run
	for i := range runs {
		r := &runs[i]
		switch rank, known := r.Verdict.Class.Rank(); {
		case !known:
			unknown = append(unknown, r)
		case rank == 0 && r.Oracle.Bought == 0:
			none = append(none, r)
		case harmful(r.Verdict.Class):
			damaged = append(damaged, r)
		case rank > 0:
			intact = append(intact, r)
		case r.Verdict.Class == oracle.ClassNotExercised:
			idle = append(idle, r)
		default:
			safe = append(safe, r)
		}
	}
	fastest := func(rs []*results.Run) {
		slices.SortStableFunc(rs, func(a, b *results.Run) int { return cmp.Compare(b.SalesPerSec, a.SalesPerSec) })
	}
	var parts []string
	if len(safe) > 0 {
		fastest(safe)
		parts = append(parts, fmt.Sprintf("Nothing found at this traffic: %s; the fastest of them is %s at %.0f sales/s.",
			labels(safe), safe[0].Label(), safe[0].SalesPerSec))
	} else {
		parts = append(parts, "Every design found something at this traffic, or was not exercised.")
	}
	if len(idle) > 0 {
		fastest(idle)
		var ds []string
		for _, r := range idle {
			ds = append(ds, fmt.Sprintf("%s (%.0f sales/s)", r.Label(), r.SalesPerSec))
		}
		parts = append(parts, "Not exercised, the fault never struck: "+strings.Join(ds, ", ")+".")
	}
	if len(intact) > 0 {
		var ds []string
		for _, r := range intact {
			ds = append(ds, fmt.Sprintf("%s %s: %s (%.0f sales/s)", r.Label(), r.Verdict.Cell(), r.Consequence(), r.SalesPerSec))
		}
		parts = append(parts, "Stock intact, but: "+strings.Join(ds, "; ")+".")
	}
	if len(damaged) > 0 {
		slices.SortStableFunc(damaged, func(a, b *results.Run) int { return cmp.Compare(rate(a), rate(b)) })
		var ds []string
		for _, r := range damaged {
			ds = append(ds, fmt.Sprintf("%s %s: %s, %s per 10,000 sales (%.0f sales/s)", r.Label(), r.Verdict.Cell(), r.Consequence(), r.DamageRate, r.SalesPerSec))
		}
		parts = append(parts, "Damage: "+strings.Join(ds, "; ")+".")
	}
	if len(none) > 0 {
		parts = append(parts, fmt.Sprintf("Sold nothing: %s.", labels(none)))
	}
	if len(unknown) > 0 {
		parts = append(parts, fmt.Sprintf("No verdict (Redis could not be read): %s.", labels(unknown)))
	}
	return strings.Join(parts, " ")
}

// rate is r's damage per 10,000 sales, 0 when it has none.
func rate(r *results.Run) float64 {
	if r.DamageRate == nil {
		return 0
	}
	return r.DamageRate.Per10k
}

// harmful reports whether a verdict class is damage to the stock or the orders.
func harmful(c oracle.Class) bool {
	return c == oracle.ClassOversold || c == oracle.ClassLost || c == oracle.ClassDuplicated
}

func labels(rs []*results.Run) string {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Label()
	}
	return strings.Join(names, ", ")
}
