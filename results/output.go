package results

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Output is a run directory: results.json, summary.md and one latency plot per scenario.
type Output struct {
	Dir string
}

// Create makes the run directory base/id; it fails if it already exists.
func Create(base, id string) (*Output, error) {
	if err := os.MkdirAll(base, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	dir := filepath.Join(base, id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	return &Output{Dir: dir}, nil
}

// Progress writes results.json alone. It is called after every sale, so that a run that
// dies later still leaves what it measured.
func (o *Output) Progress(f *File) error {
	return writeJSON(filepath.Join(o.Dir, "results.json"), f)
}

// Write writes f and everything derived from it: results.json, one latency plot per
// scenario and fault plan, and summary.md.
func (o *Output) Write(f *File) error {
	errs := []error{o.Progress(f)}
	var plots []string
	for _, g := range Groups(f.Runs) {
		base, title := fileSafe(g.Scenario), g.Scenario
		if g.Faults != "none" {
			base += "-" + fileSafe(g.Faults)
			title += ", faults " + g.Faults
		}
		phase, _ := g.Runs[0].mainLatency()
		name := "latency-" + base + ".png"
		err := PlotLatency(filepath.Join(o.Dir, name), phase.String()+" latency: "+title, phase, g.Runs)
		errs = append(errs, err)
		if err == nil {
			plots = append(plots, name)
		}
		if g.Runs[0].Kind == "queue" {
			name := "backlog-" + base + ".png"
			err := PlotBacklog(filepath.Join(o.Dir, name), "backlog: "+title, g.Runs)
			errs = append(errs, err)
			if err == nil {
				plots = append(plots, name)
			}
		}
	}
	errs = append(errs, os.WriteFile(filepath.Join(o.Dir, "summary.md"), Summary(f, plots), 0o644))
	return errors.Join(errs...)
}

// fileSafe turns a scenario or fault plan into a file name part.
func fileSafe(s string) string {
	return strings.NewReplacer("+", "_", ":", "-", "=", "", "/", "-", " (", "-", " fulfil)", "", " ", "-").Replace(s)
}

// Summary renders summary.md: the verdict table, the target, and links to the plots.
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
	for _, p := range plots {
		fmt.Fprintf(&b, "\n![%s](%s)\n", p, p)
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
