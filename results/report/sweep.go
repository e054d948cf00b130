package report

import (
	"cmp"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/stockbench/stockbench/results"
)

// sweepFigures plots each sweep among runs: damage per 10,000 sales, sales/s and p99
// against the setting it varied, one line per design: the knee where a design stops
// overselling, or starts to crawl.
func sweepFigures(runs []results.Run) []Figure {
	type key struct{ param, base, faults string }
	var order []key
	byKey := map[key][]*results.Run{}
	for i := range runs {
		r := &runs[i]
		if r.Sweep == nil {
			continue
		}
		base, _, _ := strings.Cut(r.Subject(), " "+r.Sweep.Param+"=")
		k := key{r.Sweep.Param, base, r.FaultPlan()}
		if byKey[k] == nil {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], r)
	}
	var figs []Figure
	for _, k := range order {
		rs := byKey[k]
		slices.SortStableFunc(rs, func(a, b *results.Run) int { return cmp.Compare(a.Sweep.X, b.Sweep.X) })
		section := "sweep of " + k.param + ": " + k.base + ", faults " + k.faults
		for _, m := range []struct {
			name, y string
			value   func(*results.Run) (float64, bool)
		}{
			{"damage", "damage per 10,000 sales", func(r *results.Run) (float64, bool) {
				if r.DamageRate == nil {
					return 0, false
				}
				return r.DamageRate.Per10k, true
			}},
			{"sales", "sales/s", func(r *results.Run) (float64, bool) { return r.SalesPerSec, true }},
			{"p99", "p99 of the purchase (ms)", func(r *results.Run) (float64, bool) {
				_, l := r.MainLatency()
				return float64(l.P99Us) / 1000, l.Count > 0
			}},
		} {
			title := m.y + " against " + k.param
			f := Figure{Name: "sweep-" + m.name + "-" + fileSafe(k.param+"-"+k.base+"-"+k.faults), Title: title, Section: section,
				w: 8 * vg.Inch, h: 4.5 * vg.Inch}
			axis := k.param
			if u := rs[0].Sweep.Unit; u != "" {
				axis += " (" + u + ")"
			}
			f.plot, f.legend = sweepPlot(title, axis, m.y, rs, m.value)
			if f.plot == nil {
				f.Note = "nothing to draw: no point had a value"
			}
			figs = append(figs, f)
		}
	}
	return figs
}

// sweepPlot is one line per design through its points' values; nil when none had one.
func sweepPlot(title, x, y string, rs []*results.Run, value func(*results.Run) (float64, bool)) (*plot.Plot, *plot.Legend) {
	l := newLines(title, x, y)
	var designs []string
	for _, r := range rs {
		if !slices.Contains(designs, r.Label()) {
			designs = append(designs, r.Label())
		}
	}
	lo, hi := rs[0].Sweep.X, rs[len(rs)-1].Sweep.X
	for _, d := range designs {
		var xys plotter.XYs
		for _, r := range rs {
			if v, ok := value(r); ok && r.Label() == d {
				xys = append(xys, plotter.XY{X: r.Sweep.X, Y: v})
			}
		}
		if len(xys) > 0 {
			if err := l.add(d, xys); err != nil {
				return nil, nil
			}
		}
	}
	if lo > 0 && hi/lo >= 4 {
		l.p.X.Scale, l.p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	}
	p := l.plot()
	if p == nil {
		return nil, nil
	}
	leg := p.Legend
	leg.Top, leg.Left = true, true
	p.Legend = plot.NewLegend()
	return p, &leg
}
