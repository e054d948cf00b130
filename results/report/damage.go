package report

import (
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Damages are the harms a heat map shows per design and fault plan, for each kind of
// sale: for locks, orders beyond the stock and two holders at once; for queues, orders
// lost and applied twice.
var Damages = map[results.SaleKind][]oracle.Class{
	results.LockSale:  {oracle.ClassOversold, oracle.ClassOverlap},
	results.QueueSale: {oracle.ClassLost, oracle.ClassDuplicated},
}

// damageGrid is a matrix's counts as a heat map grid: columns are fault plans, rows are
// implementations from the top. Z is log-scaled so one oversold unit shows beside 70.
type damageGrid struct {
	m results.Matrix
	c oracle.Class
}

func (g damageGrid) Dims() (c, r int) { return len(g.m.Faults), len(g.m.Locks) }
func (g damageGrid) X(c int) float64  { return float64(c) }
func (g damageGrid) Y(r int) float64  { return float64(r) }
func (g damageGrid) Min() float64     { return 0 }
func (g damageGrid) Max() float64     { return math.Log1p(1000) }

func (g damageGrid) count(c, r int) (int64, bool) {
	run := g.m.Run(g.m.Locks[len(g.m.Locks)-1-r], g.m.Faults[c])
	if run == nil {
		return 0, false
	}
	return run.Damage(g.c), true
}

func (g damageGrid) Z(c, r int) float64 {
	n, ok := g.count(c, r)
	if !ok {
		return math.NaN()
	}
	return math.Log1p(float64(min(n, 1000)))
}

// whiteToRed runs from white (none) to deep red (a thousand or more).
type whiteToRed struct{}

func (whiteToRed) Colors() []color.Color {
	cs := make([]color.Color, 64)
	for i := range cs {
		f := float64(i) / float64(len(cs)-1)
		cs[i] = color.RGBA{R: uint8(255 - 75*f), G: uint8(255 * (1 - f)), B: uint8(255 * (1 - f)), A: 255}
	}
	return cs
}

// DamagePlot is the heat map of d over m's implementations and fault plans, each cell
// labelled with its count; a cell whose sale did not run is grey.
func DamagePlot(title string, m results.Matrix, c oracle.Class) (*plot.Plot, vg.Length, vg.Length, error) {
	p := plot.New()
	p.Title.Text = title
	g := damageGrid{m, c}
	h := plotter.NewHeatMap(g, whiteToRed{})
	h.NaN = color.Gray{Y: 200}
	p.Add(h)
	var labels plotter.XYLabels
	cols, rows := g.Dims()
	for c := range cols {
		for r := range rows {
			if n, ok := g.count(c, r); ok {
				labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(r)})
				labels.Labels = append(labels.Labels, strconv.FormatInt(n, 10))
			}
		}
	}
	if len(labels.XYs) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, 0, 0, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign, l.TextStyle[i].YAlign = -0.5, -0.5
		}
		p.Add(l)
	}
	var xt, yt plot.ConstantTicks
	for c, f := range m.Faults {
		xt = append(xt, plot.Tick{Value: float64(c), Label: f})
	}
	for r := range rows {
		yt = append(yt, plot.Tick{Value: float64(r), Label: m.Locks[rows-1-r]})
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = xt, yt
	p.X.Tick.Label.Rotation, p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = math.Pi/6, -1, -0.5
	p.X.Min, p.X.Max = -0.5, float64(cols)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(rows)-0.5
	w := max(5*vg.Inch, 2.5*vg.Inch+vg.Length(cols)*0.9*vg.Inch)
	ht := max(3*vg.Inch, 2*vg.Inch+vg.Length(rows)*0.3*vg.Inch)
	return p, w, ht, nil
}
