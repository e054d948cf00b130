package results

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Figure is one plot of a report, saved as Name.png and Name.svg.
type Figure struct {
	Name  string
	Title string
	// Section is the heading the report shows the figure under.
	Section string
	plot    *plot.Plot
	w, h    vg.Length
	// legend, when set, is drawn to the right of the plot rather than over it: with a
	// dozen designs a legend inside covers the curves.
	legend *plot.Legend
}

// Figures builds every plot of runs: per scenario, heat maps of the damage by
// implementation and fault plan; per scenario and fault plan, the latency spectrum,
// throughput over time, the wait distribution and, for queues, the backlog over time.
func Figures(runs []Run) ([]Figure, error) {
	var figs []Figure
	add := func(p *plot.Plot, err error, name, title, section string, w, h vg.Length) error {
		if err != nil || p == nil {
			return err
		}
		figs = append(figs, Figure{Name: name, Title: title, Section: section, plot: p, w: w, h: h})
		return nil
	}
	for _, m := range Matrices(runs) {
		if len(m.Faults) == 1 && len(m.Locks) == 1 {
			continue
		}
		kind := m.Run(m.Locks[0], m.Faults[0]).Kind
		for _, d := range Damages[kindOr(kind)] {
			title := d.Name + " by design and fault: " + m.Scenario
			p, w, h, err := DamagePlot(title, m, d)
			if err := add(p, err, d.Name+"-"+fileSafe(m.Scenario), title, m.Scenario, w, h); err != nil {
				return nil, err
			}
		}
	}
	// addLines adds a plot of one line per design, its legend moved beside it.
	addLines := func(p *plot.Plot, err error, name, title, section string, w, h vg.Length) error {
		if err := add(p, err, name, title, section, w, h); err != nil || p == nil {
			return err
		}
		l := p.Legend
		l.Top, l.Left = true, true
		p.Legend = plot.NewLegend()
		figs[len(figs)-1].legend = &l
		return nil
	}
	for _, g := range Groups(runs) {
		base, title := fileSafe(g.Scenario), g.Scenario
		if g.Faults != "none" {
			base += "-" + fileSafe(g.Faults)
			title += ", faults " + g.Faults
		}
		phase, _ := g.Runs[0].mainLatency()
		wide, tall := 9*vg.Inch, 5*vg.Inch
		p, err := LatencyPlot(phase.String()+" latency: "+title, phase, g.Runs)
		if err := addLines(p, err, "latency-"+base, "latency spectrum", title, wide, tall); err != nil {
			return nil, err
		}
		p, err = ThroughputPlot("throughput: "+title, g.Runs)
		if err := addLines(p, err, "throughput-"+base, "throughput over time", title, wide, tall); err != nil {
			return nil, err
		}
		p, err = FairnessPlot("wait distribution: "+title, g.Runs)
		if err := addLines(p, err, "fairness-"+base, "wait distribution", title, wide, tall); err != nil {
			return nil, err
		}
		if g.Runs[0].Kind == "queue" {
			p, err = BacklogPlot("backlog: "+title, g.Runs)
			if err := addLines(p, err, "backlog-"+base, "backlog over time", title, wide, tall); err != nil {
				return nil, err
			}
		}
	}
	return figs, nil
}

// kindOr reads a missing kind (results written before queues existed) as a lock sale.
func kindOr(kind string) string {
	if kind == "" {
		return "lock"
	}
	return kind
}

// SaveAll writes every figure as PNG and SVG into dir, on all CPUs: rendering is most of
// the time a report takes.
func SaveAll(dir string, figs []Figure) error {
	errs := make([]error, len(figs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range figs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = figs[i].save(dir)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func (f Figure) save(dir string) error {
	for _, format := range []string{"png", "svg"} {
		path := filepath.Join(dir, f.Name+"."+format)
		if err := f.write(path, format); err != nil {
			os.Remove(path)
			return fmt.Errorf("results: save %s: %w", path, err)
		}
	}
	return nil
}

// write draws the figure in format into path, its own legend to the right of the plot.
func (f Figure) write(path, format string) error {
	c, err := draw.NewFormattedCanvas(f.w, f.h, format)
	if err != nil {
		return err
	}
	dc := draw.New(c)
	if f.legend == nil {
		f.plot.Draw(dc)
	} else {
		pad := vg.Points(10)
		w := f.legend.Rectangle(dc).Size().X + 2*pad
		f.plot.Draw(draw.Crop(dc, 0, -w, 0, 0))
		f.legend.Draw(draw.Crop(dc, f.w-w+pad, 0, 0, -3*pad)) // below the title's line
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := c.WriteTo(file); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
