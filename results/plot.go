package results

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// percentileTicks label the spectrum's x axis, where x = 1/(1-q): each decade is one more
// nine.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"},
	{Value: 1e6, Label: "99.9999%"},
}

// PlotLatency draws the latency percentile spectrum of phase for each run, as HdrHistogram
// plots it (log percentile axis, log latency axis), and saves it as a PNG or SVG by the
// extension of path. Runs without samples in the phase are left out.
func PlotLatency(path, title string, phase Phase, runs []Run) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "percentile"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks
	p.Y.Label.Text = phase.String() + " latency (ms)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	drawn := 0
	for i := range runs {
		l, ok := runs[i].Latency[phase.String()]
		if !ok || l.Count == 0 {
			continue
		}
		xys, err := spectrum(l)
		if err != nil {
			return err
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("results: plot %s: %w", runs[i].Impl, err)
		}
		line.Color = plotutil.Color(drawn)
		line.Dashes = plotutil.Dashes(drawn / 7)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(runs[i].Impl, line)
		drawn++
	}
	if drawn == 0 {
		return nil
	}
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("results: save %s: %w", path, err)
	}
	return nil
}

// spectrum samples l's histogram at 20 points per decade of x = 1/(1-q), from the median
// (x=1 is the minimum) to the histogram's resolution, its total count, where q=100%.
func spectrum(l Latency) (plotter.XYs, error) {
	h, err := l.Histogram()
	if err != nil {
		return nil, err
	}
	total := float64(h.TotalCount())
	var xys plotter.XYs
	for x := 1.0; ; x *= math.Pow(10, 1.0/20) {
		x = min(x, total)
		q := 100 * (1 - 1/x)
		y := max(float64(h.ValueAtQuantile(q))/1000, 0.001) // µs to ms; a log axis has no zero
		xys = append(xys, plotter.XY{X: x, Y: y})
		if x >= total {
			return xys, nil
		}
	}
}

// PlotBacklog draws each run's queue length over time and saves it by path's extension.
// Runs without samples are left out.
func PlotBacklog(path, title string, runs []Run) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the sale began"
	p.Y.Label.Text = "tasks waiting or unacknowledged"
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	drawn := 0
	for i := range runs {
		if len(runs[i].Backlog) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(runs[i].Backlog))
		for j, s := range runs[i].Backlog {
			xys[j] = plotter.XY{X: s.At.Seconds(), Y: float64(s.N)}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("results: plot %s: %w", runs[i].Impl, err)
		}
		line.Color = plotutil.Color(drawn)
		line.Dashes = plotutil.Dashes(drawn / 7)
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(runs[i].Impl, line)
		drawn++
	}
	if drawn == 0 {
		return nil
	}
	if err := p.Save(9*vg.Inch, 5*vg.Inch, path); err != nil {
		return fmt.Errorf("results: save %s: %w", path, err)
	}
	return nil
}
