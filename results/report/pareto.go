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

// ParetoReading reads the view in a line: the designs that did no damage at this traffic
// and the fastest of them, then the others' damage.
func ParetoReading(runs []results.Run) string {
	var safe, damaged, none []*results.Run
	for i := range runs {
		r := &runs[i]
		switch {
		case r.DamageRate == nil:
			none = append(none, r)
		case r.DamageRate.Damaged == 0 && !harmful(r.Verdict.Class):
			safe = append(safe, r)
		default:
			damaged = append(damaged, r)
		}
	}
	var parts []string
	if len(safe) > 0 {
		slices.SortFunc(safe, func(a, b *results.Run) int { return cmp.Compare(b.SalesPerSec, a.SalesPerSec) })
		parts = append(parts, fmt.Sprintf("No damage at this traffic: %s; the fastest of them is %s at %.0f sales/s.",
			labels(safe), safe[0].Label(), safe[0].SalesPerSec))
	} else {
		parts = append(parts, "Every design that sold did damage at this traffic.")
	}
	if len(damaged) > 0 {
		slices.SortFunc(damaged, func(a, b *results.Run) int { return cmp.Compare(a.DamageRate.Per10k, b.DamageRate.Per10k) })
		var ds []string
		for _, r := range damaged {
			ds = append(ds, fmt.Sprintf("%s %s per 10,000 sales (%.0f sales/s)", r.Label(), r.DamageRate, r.SalesPerSec))
		}
		parts = append(parts, "Damage: "+strings.Join(ds, "; ")+".")
	}
	if len(none) > 0 {
		parts = append(parts, fmt.Sprintf("Sold nothing: %s.", labels(none)))
	}
	return strings.Join(parts, " ")
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
