package results

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Output is a run directory: results.json, summary.md, report.html and the plots.
type Output struct {
	Dir  string
	made bool
}

// NewOutput names the run directory base/id without making it: it is made when first
// written to, so a run stopped before it measured anything leaves no empty directory.
func NewOutput(base, id string) *Output { return &Output{Dir: filepath.Join(base, id)} }

// Create makes the run directory base/id now; it fails if it already exists.
func Create(base, id string) (*Output, error) {
	o := NewOutput(base, id)
	return o, o.make()
}

func (o *Output) make() error {
	if o.made {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(o.Dir), 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	if err := os.Mkdir(o.Dir, 0o755); err != nil {
		return fmt.Errorf("results: %w", err)
	}
	o.made = true
	return nil
}

// Progress writes results.json alone, making the directory if need be. It is called
// after every sale, so that a run that dies later still leaves what it measured.
func (o *Output) Progress(f *File) error {
	if err := o.make(); err != nil {
		return err
	}
	return writeJSON(filepath.Join(o.Dir, "results.json"), f)
}

// Write writes f and everything derived from it: results.json first, so that nothing
// the report does can lose it, then the plots as PNG and SVG, summary.md and
// report.html. When ctx ends the report is left unwritten and Write returns ctx's error.
func (o *Output) Write(ctx context.Context, f *File) error {
	if err := o.Progress(f); err != nil {
		return err
	}
	return o.Report(ctx, f)
}

// Report writes the report of f into the run directory, results.json being there.
func (o *Output) Report(ctx context.Context, f *File) error {
	return Report(ctx, o.Dir, []Source{{File: f}})
}

// Report writes into dir what is derived from the sources: the plots as PNG and SVG,
// summary.md and report.html. Several sources are compared side by side: each run is
// labelled with its source's name and runs of one design sit next to each other.
//
// A plot that has nothing to draw or cannot be drawn is named in the report with the
// reason; a panic anywhere in the report's making is returned as an error rather than
// ending the program, so a caller still cleans up. report.html is written last: when
// it is there, the report is whole. When ctx ends, Report stops between plots.
func Report(ctx context.Context, dir string, sources []Source) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("results: report: %v", p)
		}
	}()
	if len(sources) == 0 {
		return errors.New("results: report: no results to report")
	}
	f := sources[0].File
	runs := f.Runs
	if len(sources) > 1 {
		f, runs = combine(sources)
	}
	for i := range runs {
		runs[i].fillFairness()
	}
	figs := Figures(runs)
	if err := SaveAll(ctx, dir, figs); err != nil {
		return err
	}
	var pngs []string
	for _, fig := range figs {
		if fig.Note == "" {
			pngs = append(pngs, fig.Name+".png")
		}
	}
	summary := *f
	summary.Runs = runs
	return errors.Join(
		os.WriteFile(filepath.Join(dir, "summary.md"), Summary(&summary, pngs), 0o644),
		WriteHTML(dir, sources, runs, figs))
}

// combine merges the sources' runs, labelled by source, ordered by scenario and design
// as they first appear, then by source; and a file that describes them together.
func combine(sources []Source) (*File, []Run) {
	f := &File{Complete: true, Target: sources[0].File.Target, Host: sources[0].File.Host}
	var runs []Run
	var ids, incomplete []string
	for k, s := range sources {
		ids = append(ids, s.Name)
		if !s.File.Complete {
			f.Complete = false
			incomplete = append(incomplete, s.Name+": "+s.File.Incomplete)
		}
		for _, r := range s.File.Runs {
			r.Source = s.Name
			r.sourceIndex = k
			runs = append(runs, r)
		}
	}
	f.ID, f.Incomplete = strings.Join(ids, " vs "), strings.Join(incomplete, "; ")
	first := func(key func(*Run) string) map[string]int {
		m := make(map[string]int)
		for i := range runs {
			if _, ok := m[key(&runs[i])]; !ok {
				m[key(&runs[i])] = len(m)
			}
		}
		return m
	}
	subj, impl := first((*Run).Subject), first(func(r *Run) string { return r.Impl })
	slices.SortStableFunc(runs, func(a, b Run) int {
		return cmp.Or(cmp.Compare(subj[a.Subject()], subj[b.Subject()]),
			cmp.Compare(impl[a.Impl], impl[b.Impl]), cmp.Compare(a.sourceIndex, b.sourceIndex))
	})
	return f, runs
}

// fileSafe turns a scenario or fault plan into a file name part.
func fileSafe(s string) string {
	return strings.NewReplacer("+", "_", ":", "-", "=", "", "/", "-", " (", "-", " fulfil)", "", " ", "-").Replace(s)
}

// Summary renders summary.md: the verdict table, the target, and where the plots are. It
// names them rather than embedding them: a CI job summary shows no local images.
func Summary(f *File, plots []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# stockbench run %s\n\n", f.ID)
	if !f.Complete {
		fmt.Fprintf(&b, "> **Incomplete**: %s. The figures cover what ran until then.\n\n", f.Incomplete)
	}
	fmt.Fprintf(&b, "Redis: %s  \nLoad: %d CPUs, %s/%s, %s\n\n", f.Target, f.Host.CPUs, f.Host.OS, f.Host.Arch, f.Host.GoVersion)
	for _, m := range Matrices(f.Runs) {
		if len(m.Faults) > 1 {
			m.WriteMarkdown(&b)
			fmt.Fprintf(&b, "\n%s\n\n", MatrixLegend)
		}
	}
	if s := Surprises(f.Runs); len(s) > 0 {
		fmt.Fprintf(&b, "**Not as documented:**\n\n- %s\n\n", strings.Join(s, "\n- "))
	}
	WriteMarkdownTable(&b, f.Runs)
	fmt.Fprintf(&b, "\n%s\n", Legend)
	if len(plots) > 0 {
		fmt.Fprintf(&b, "\nPlots (%d, each as PNG and SVG, e.g. `%s`) and a table per design: `report.html` in the run directory.\n", len(plots), plots[0])
	}
	return b.Bytes()
}

// Group is the runs of one scenario under one fault plan: one per implementation.
type Group struct {
	Scenario, Faults string
	Runs             []Run
}

// Groups splits runs by scenario and fault plan, in order of first appearance.
func Groups(runs []Run) []Group {
	var groups []Group
	for _, r := range runs {
		i := slices.IndexFunc(groups, func(g Group) bool { return g.Scenario == r.Subject() && g.Faults == r.FaultPlan() })
		if i < 0 {
			groups = append(groups, Group{Scenario: r.Subject(), Faults: r.FaultPlan()})
			i = len(groups) - 1
		}
		groups[i].Runs = append(groups[i].Runs, r)
	}
	return groups
}
