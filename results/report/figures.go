package report

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// Figure is one plot of a report: embedded in report.html, and saved under PlotsDir as
// Name.png, Name.svg or both, as --plots says.
type Figure struct {
	Name  string
	Title string
	// PNG is the plot drawn as PNG, which report.html embeds; Files are the plot's files
	// as the report links them, relative to the run directory. Both are set by SaveAll.
	PNG   []byte
	Files []string
	// Section is the heading the report shows the figure under.
	Section string
	// Reading, when set, is a line that reads the figure, shown under it.
	Reading string
	// Note, when set, is why the figure has no image: nothing to draw (no purchase was
	// timed, say), or drawing it failed. The report shows the note in its place.
	Note string
	plot *plot.Plot
	w, h vg.Length
	// legend, when set, is drawn to the right of the plot rather than over it: with a
	// dozen designs a legend inside covers the curves.
	legend *plot.Legend
}

// Figures builds every plot of runs: per scenario, heat maps of the damage by
// implementation and fault plan; per scenario and fault plan, the latency spectrum,
// throughput over time, the wait distribution and, for queues, the backlog over time.
//
// A plot that has nothing to draw, or that cannot be built, is a Figure with a Note:
// a tiny sale still gets its report, which says what is missing and why.
func Figures(runs []results.Run) []Figure {
	figs := append(paretoFigures(runs), sweepFigures(runs)...) // first: the views on top
	add := func(p *plot.Plot, err error, name, title, section string, w, h vg.Length) bool {
		f := Figure{Name: name, Title: title, Section: section, plot: p, w: w, h: h}
		switch {
		case err != nil:
			f.plot, f.Note = nil, "could not be drawn: "+err.Error()
		case p == nil:
			f.Note = "nothing to draw: " + nothingTo(name)
		}
		figs = append(figs, f)
		return f.plot != nil
	}
	for _, m := range results.Matrices(runs) {
		if len(m.Faults) == 1 && len(m.Locks) == 1 {
			continue
		}
		kind := m.Run(m.Locks[0], m.Faults[0]).Kind
		for _, c := range Damages[kindOr(kind)] {
			name := strings.ToLower(string(c))
			title := name + " by design and fault: " + m.Scenario
			p, w, h, err := DamagePlot(title, m, c)
			add(p, err, name+"-"+fileSafe(m.Scenario), title, m.Scenario, w, h)
		}
	}
	// addLines adds a plot of one line per design, its legend moved beside it.
	addLines := func(p *plot.Plot, err error, name, title, section string, w, h vg.Length) {
		if !add(p, err, name, title, section, w, h) {
			return
		}
		l := p.Legend
		l.Top, l.Left = true, true
		p.Legend = plot.NewLegend()
		figs[len(figs)-1].legend = &l
	}
	for _, g := range Groups(runs) {
		base, title := fileSafe(g.Scenario), g.Scenario
		if g.Faults != faults.None {
			base += "-" + fileSafe(g.Faults)
			title += ", faults " + g.Faults
		}
		phase, _ := g.Runs[0].MainLatency()
		wide, tall := 9*vg.Inch, 5*vg.Inch
		p, err := LatencyPlot(phase.String()+" latency: "+title, phase, g.Runs)
		addLines(p, err, "latency-"+base, "latency spectrum", title, wide, tall)
		p, err = ThroughputPlot("throughput: "+title, g.Runs)
		addLines(p, err, "throughput-"+base, "throughput over time", title, wide, tall)
		p, err = FairnessPlot("wait distribution: "+title, g.Runs)
		addLines(p, err, "fairness-"+base, "wait distribution", title, wide, tall)
		if g.Runs[0].Kind == results.QueueSale {
			p, err = BacklogPlot("backlog: "+title, g.Runs)
			addLines(p, err, "backlog-"+base, "backlog over time", title, wide, tall)
			if slices.ContainsFunc(g.Runs, func(r results.Run) bool { return r.Recovery != nil }) {
				p, err = RecoveryPlot("recovery: "+title, g.Runs)
				add(p, err, "recovery-"+base, "recovery time (a worker's death to its task's next delivery)", title, wide, tall)
			}
		}
	}
	return figs
}

// nothingTo says why a plot named name had nothing to draw.
func nothingTo(name string) string {
	kind, _, _ := strings.Cut(name, "-")
	switch kind {
	case "latency", "fairness":
		return "no purchase (or order) was timed: none succeeded, or all fell in the warm-up"
	case "throughput":
		return "no sale was confirmed"
	case "backlog":
		return "the queue's length was never sampled"
	case "recovery":
		return "no task a dead worker held was delivered again"
	}
	return "no run had data for it"
}

// kindOr reads a missing kind (results written before queues existed) as a lock sale.
func kindOr(kind results.SaleKind) results.SaleKind {
	if kind == "" {
		return results.LockSale
	}
	return kind
}

// SaveAll draws every figure that has a plot, on all CPUs (rendering is most of the time
// a report takes): as PNG in memory for report.html, and into dir's PlotsDir in the
// formats plots names. A figure that cannot be drawn or written, even one whose drawing
// panics inside the plotting library, gets a Note saying so and no files; the others are
// written all the same. The same plots at the top of dir, where reports before PlotsDir
// wrote them, are removed: a report rebuilt keeps one copy of each. It stops early, with
// ctx's error, when ctx ends.
func SaveAll(ctx context.Context, dir string, figs []Figure, plots Plots) error {
	if len(plots.Formats()) > 0 {
		if err := os.MkdirAll(filepath.Join(dir, PlotsDir), 0o755); err != nil {
			return fmt.Errorf("report: plots: %w", err)
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i := range figs {
		if figs[i].plot == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case sem <- struct{}{}:
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := figs[i].save(dir, plots.Formats()); err != nil {
				figs[i].Note, figs[i].plot = "could not be drawn: "+err.Error(), nil
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("report: plots: %w", err)
	}
	return nil
}

// save draws f as PNG, keeps it, and writes it in each of formats under dir's PlotsDir;
// a panic in the plotting library is an error of f's, and leaves none of its files.
func (f *Figure) save(dir string, formats []string) (err error) {
	for _, format := range []string{"png", "svg"} {
		os.Remove(filepath.Join(dir, f.Name+"."+format)) // an older report's, at the top
		if !slices.Contains(formats, format) {
			os.Remove(filepath.Join(dir, PlotsDir, f.Name+"."+format)) // one built with other --plots
		}
	}
	var written []string
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("report: save %s: %v", f.Name, p)
		}
		if err != nil {
			for _, w := range written {
				os.Remove(filepath.Join(dir, w))
			}
			f.PNG, f.Files = nil, nil
		}
	}()
	for _, format := range []string{"png", "svg"} {
		keep := slices.Contains(formats, format)
		if format != "png" && !keep {
			continue
		}
		b, err := f.render(format)
		if err != nil {
			return fmt.Errorf("report: save %s.%s: %w", f.Name, format, err)
		}
		if format == "png" {
			f.PNG = b
		}
		if !keep {
			continue
		}
		rel := filepath.Join(PlotsDir, f.Name+"."+format)
		written = append(written, rel)
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			return fmt.Errorf("report: save %s: %w", rel, err)
		}
		f.Files = append(f.Files, rel)
	}
	return nil
}

// render draws the figure in format, its own legend to the right of the plot.
func (f *Figure) render(format string) ([]byte, error) {
	if format == "png" {
		return f.renderPNG()
	}
	c, err := draw.NewFormattedCanvas(f.w, f.h, format)
	if err != nil {
		return nil, err
	}
	return f.drawOn(c)
}

// drawOn draws the figure on c and writes it out.
func (f *Figure) drawOn(c interface {
	vg.CanvasSizer
	io.WriterTo
}) ([]byte, error) {
	dc := draw.New(c)
	if f.legend == nil {
		f.plot.Draw(dc)
	} else {
		pad := vg.Points(10)
		w := f.legend.Rectangle(dc).Size().X + 2*pad
		f.plot.Draw(draw.Crop(dc, 0, -w, 0, 0))
		f.legend.Draw(draw.Crop(dc, f.w-w+pad, 0, 0, -3*pad)) // below the title's line
	}
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// paretoFigures is the Pareto view of the runs, when they have a sale to compare.
func paretoFigures(runs []results.Run) []Figure {
	g, ok := paretoGroup(runs)
	if !ok {
		return nil
	}
	title := "damage against sales/s: " + g.Scenario
	if g.Faults != faults.None {
		title += ", faults " + g.Faults
	}
	f := Figure{Name: "pareto-" + fileSafe(g.Scenario), Title: title, Section: ParetoSection, w: 8 * vg.Inch, h: 5 * vg.Inch,
		Reading: ParetoReading(g.Runs)}
	p, err := ParetoPlot(title, g.Runs)
	switch {
	case err != nil:
		f.Note = "could not be drawn: " + err.Error()
	case p == nil:
		f.Note = "nothing to draw: no design sold anything"
	}
	f.plot = p
	return []Figure{f}
}

// ParetoSection is the section of the Pareto view, which the report shows on top.
const ParetoSection = "Pareto"
