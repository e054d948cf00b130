package report

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/stockbench/stockbench/results"
)

// percentileTicks label the spectrum's x axis, where x = 1/(1-q): each decade is one more
// nine.
var percentileTicks = plot.ConstantTicks{
	{Value: 1, Label: "0%"}, {Value: 10, Label: "90%"}, {Value: 100, Label: "99%"},
	{Value: 1e3, Label: "99.9%"}, {Value: 1e4, Label: "99.99%"}, {Value: 1e5, Label: "99.999%"},
	{Value: 1e6, Label: "99.9999%"},
}

// lines is a plot of one line per run, each with its implementation's name in the legend.
type lines struct {
	p     *plot.Plot
	drawn int
}

func newLines(title, x, y string) *lines {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return &lines{p: p}
}

func (l *lines) add(name string, xys plotter.XYs) error {
	line, err := plotter.NewLine(xys)
	if err != nil {
		return fmt.Errorf("report: plot %s: %w", name, err)
	}
	line.Color = plotutil.Color(l.drawn)
	line.Dashes = plotutil.Dashes(l.drawn / 7)
	line.Width = vg.Points(1.5)
	l.p.Add(line)
	l.p.Legend.Add(name, line)
	l.drawn++
	return nil
}

// plot is the finished plot, or nil when no run had anything to draw.
func (l *lines) plot() *plot.Plot {
	if l.drawn == 0 {
		return nil
	}
	logRange(&l.p.X)
	logRange(&l.p.Y)
	return l.p
}

// logRange keeps a log axis drawable when its data span no range, as one purchase, or
// several equally fast, do: gonum widens an empty range by 1 on either side, and a log
// scale cannot reach 0.
func logRange(a *plot.Axis) {
	if _, ok := a.Scale.(plot.LogScale); !ok {
		return
	}
	if a.Max <= 0 {
		a.Max = 1
	}
	if a.Min <= 0 {
		a.Min = math.Min(0.001, a.Max)
	}
	if a.Min >= a.Max {
		a.Min, a.Max = a.Min/2, a.Max*2
	}
}

// LatencyPlot is the latency percentile spectrum of phase for each run, as HdrHistogram
// plots it: log percentile axis, log latency axis. Runs without samples are left out.
func LatencyPlot(title string, phase results.Phase, runs []results.Run) (*plot.Plot, error) {
	l := newLines(title, "percentile", phase.String()+" latency (ms)")
	l.p.X.Scale, l.p.X.Tick.Marker = plot.LogScale{}, percentileTicks
	l.p.Y.Scale, l.p.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	l.p.Legend.Left = true
	for i := range runs {
		lat, ok := runs[i].Latency[phase.String()]
		if !ok || lat.Count == 0 || lat.Hist == "" {
			continue
		}
		xys, err := spectrum(lat)
		if err != nil {
			return nil, err
		}
		if err := l.add(runs[i].Label(), xys); err != nil {
			return nil, err
		}
	}
	return l.plot(), nil
}

// spectrum samples l's histogram at 20 points per decade of x = 1/(1-q), from the median
// (x=1 is the minimum) to the histogram's resolution, its total count, where q=100%.
func spectrum(l results.Latency) (plotter.XYs, error) {
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

// ThroughputPlot is each run's confirmed sales per second over the sale.
func ThroughputPlot(title string, runs []results.Run) (*plot.Plot, error) {
	l := newLines(title, "seconds since the sale began", "sales per second")
	for i := range runs {
		rates := results.Rates(runs[i].Sales)
		if len(rates) == 0 {
			continue
		}
		xys := make(plotter.XYs, 0, len(rates)+1)
		xys = append(xys, plotter.XY{})
		for _, s := range rates {
			xys = append(xys, plotter.XY{X: s.At.Seconds(), Y: float64(s.N)})
		}
		if err := l.add(runs[i].Label(), xys); err != nil {
			return nil, err
		}
	}
	return l.plot(), nil
}

// FairnessPlot is each run's wait distribution: the share of served buyers who waited at
// most x, with Jain's index of the waits in the legend.
func FairnessPlot(title string, runs []results.Run) (*plot.Plot, error) {
	l := newLines(title, "wait (ms)", "share of served buyers")
	l.p.X.Scale, l.p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	l.p.Legend.Left = true
	for i := range runs {
		phase, lat := runs[i].MainLatency()
		if lat.Count == 0 || lat.Hist == "" {
			continue
		}
		h, err := lat.Histogram()
		if err != nil {
			return nil, err
		}
		var xys plotter.XYs
		var seen float64
		total := float64(h.TotalCount())
		for _, b := range h.Distribution() {
			if b.Count == 0 {
				continue
			}
			seen += float64(b.Count)
			xys = append(xys, plotter.XY{X: max(float64(b.To)/1000, 0.001), Y: seen / total})
		}
		f := runs[i].Fairness
		if f == nil {
			computed, _ := results.FairnessOf(phase, lat)
			f = &computed
		}
		if err := l.add(fmt.Sprintf("%s (Jain %.2f)", runs[i].Label(), f.Jain), xys); err != nil {
			return nil, err
		}
	}
	return l.plot(), nil
}

// BacklogPlot is each run's queue length over time.
func BacklogPlot(title string, runs []results.Run) (*plot.Plot, error) {
	l := newLines(title, "seconds since the sale began", "tasks waiting or unacknowledged")
	for i := range runs {
		if len(runs[i].Backlog) == 0 {
			continue
		}
		xys := make(plotter.XYs, len(runs[i].Backlog))
		for j, s := range runs[i].Backlog {
			xys[j] = plotter.XY{X: s.At.Seconds(), Y: float64(s.N)}
		}
		if err := l.add(runs[i].Label(), xys); err != nil {
			return nil, err
		}
	}
	return l.plot(), nil
}
