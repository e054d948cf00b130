package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stockbench/stockbench/results"
)

// RecoveryPlot shows, for each run where a worker died holding a task, how long each
// task took to be delivered again: one dot per redelivery (a few per sale, so no
// percentile spectrum), and under the design's name how many never were.
func RecoveryPlot(title string, runs []results.Run) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "death to redelivery (ms)"
	p.Y.Min = 0
	var names []string
	for _, r := range runs {
		if r.Recovery == nil {
			continue
		}
		x := float64(len(names))
		name := r.Label()
		if r.Recovery.Never > 0 {
			name += fmt.Sprintf("\n%d of %d never", r.Recovery.Never, r.Recovery.Deaths)
		}
		names = append(names, name)
		l, ok := r.Latency[results.Recovery.String()]
		if !ok || l.Hist == "" {
			continue
		}
		h, err := l.Histogram()
		if err != nil {
			return nil, err
		}
		var xys plotter.XYs
		for _, b := range h.Distribution() {
			for range b.Count {
				xys = append(xys, plotter.XY{X: x, Y: float64(b.To) / 1000})
			}
		}
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		s.GlyphStyle.Radius = 3
		p.Add(s)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	return p, nil
}
