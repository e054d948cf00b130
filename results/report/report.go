// Package report turns what runs recorded into what people read: the terminal's table and
// verdict grids, plots as PNG and SVG, summary.md and report.html.
package report

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

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Write writes the report of f into the run directory o, results.json being there.
func Write(ctx context.Context, o *results.Output, f *results.File) error {
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
			err = fmt.Errorf("report: %v", p)
		}
	}()
	if len(sources) == 0 {
		return errors.New("report: no results to report")
	}
	f := sources[0].File
	runs := f.Runs
	if len(sources) > 1 {
		f, runs = combine(sources)
	}
	for i := range runs {
		runs[i].FillFairness()
	}
	plots, err := ParsePlots(f.Plots)
	if err != nil {
		plots = DefaultPlots // a record from a newer stockbench: its default
	}
	figs := Figures(runs)
	if err := SaveAll(ctx, dir, figs, plots); err != nil {
		return err
	}
	summary := *f
	summary.Runs = runs
	return errors.Join(
		writeViolations(dir, runs),
		os.WriteFile(filepath.Join(dir, "summary.md"), Summary(&summary, figs), 0o644),
		WriteHTML(dir, sources, runs, figs))
}

// violationFile is where the report draws r's violation of linearizability, or "" when
// it has none to draw.
func violationFile(r *results.Run) string {
	if l := r.Linearizability; l == nil || l.FirstViolation == nil || len(l.FirstViolation.History) == 0 {
		return ""
	}
	return "linearizability-" + fileSafe(r.Subject()+"-"+r.Label()+"-"+r.FaultPlan()) + ".html"
}

// writeViolations writes porcupine's drawing of each run's smallest window that could
// not be linearized beside the report, which links it from the run's cells.
func writeViolations(dir string, runs []results.Run) error {
	var errs []error
	for i := range runs {
		name := violationFile(&runs[i])
		if name == "" {
			continue
		}
		var b bytes.Buffer
		if err := oracle.Visualize(runs[i].Linearizability.FirstViolation, &b); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644))
	}
	return errors.Join(errs...)
}

// combine merges the sources' runs, labelled by source, ordered by scenario and design
// as they first appear, then by source; and a file that describes them together.
func combine(sources []Source) (*results.File, []results.Run) {
	f := &results.File{Complete: true, Target: sources[0].File.Target, Host: sources[0].File.Host}
	var runs []results.Run
	var ids, incomplete []string
	source := make(map[string]int)
	for k, s := range sources {
		source[s.Name] = k
		ids = append(ids, s.Name)
		if !s.File.Complete {
			f.Complete = false
			incomplete = append(incomplete, s.Name+": "+s.File.Incomplete)
		}
		for _, r := range s.File.Runs {
			r.Source = s.Name
			runs = append(runs, r)
		}
	}
	f.ID, f.Incomplete = strings.Join(ids, " vs "), strings.Join(incomplete, "; ")
	first := func(key func(*results.Run) string) map[string]int {
		m := make(map[string]int)
		for i := range runs {
			if _, ok := m[key(&runs[i])]; !ok {
				m[key(&runs[i])] = len(m)
			}
		}
		return m
	}
	subj, impl := first((*results.Run).Subject), first(func(r *results.Run) string { return r.Impl })
	slices.SortStableFunc(runs, func(a, b results.Run) int {
		return cmp.Or(cmp.Compare(subj[a.Subject()], subj[b.Subject()]),
			cmp.Compare(impl[a.Impl], impl[b.Impl]), cmp.Compare(source[a.Source], source[b.Source]))
	})
	return f, runs
}

// fileSafe turns a scenario or fault plan into a file name part.
func fileSafe(s string) string {
	return strings.NewReplacer("+", "_", ":", "-", "=", "", "/", "-", " (", "-", " fulfil)", "", " ", "-").Replace(s)
}

// Summary renders summary.md: the verdict table, the target, and where the plots are. It
// names them rather than embedding them: a CI job summary shows no local images.
func Summary(f *results.File, figs []Figure) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# stockbench run %s\n\n", f.ID)
	if !f.Complete {
		fmt.Fprintf(&b, "> **Incomplete**: %s. The figures cover what ran until then.\n\n", f.Incomplete)
	}
	fmt.Fprintf(&b, "Redis: %s  \nLoad: %d CPUs, %s/%s, %s%s\n\n", f.Target, f.Host.CPUs, f.Host.OS, f.Host.Arch, f.Host.GoVersion, shards(f)+served(f))
	writeChecks(&b, f.Checks)
	if g := Glance(f.Runs); len(g) > 0 {
		fmt.Fprintf(&b, "**Verdicts at a glance:**\n\n")
		WriteGlanceMarkdown(&b, g)
		fmt.Fprintln(&b)
	}
	if g, ok := paretoGroup(f.Runs); ok {
		where := "report.html"
		if i := slices.IndexFunc(figs, func(fig Figure) bool { return fig.Section == ParetoSection }); i >= 0 && len(figs[i].Files) > 0 {
			where = figs[i].Files[0]
		}
		fmt.Fprintf(&b, "**%s** (damage against speed, `%s`): %s\n\n", g.Scenario, where, ParetoReading(g.Runs))
	}
	for _, m := range results.Matrices(f.Runs) {
		if len(m.Faults) > 1 {
			WriteMatrixMarkdown(&b, m)
			fmt.Fprintf(&b, "\n%s\n\n", results.MatrixLegend)
		}
	}
	if len(Sheets(f.Runs)) > 0 {
		fmt.Fprintf(&b, "**Delivery guarantees** (what each queue's orders saw):\n\n")
		WriteSheetsMarkdown(&b, f.Runs)
		fmt.Fprintln(&b)
	}
	if d := DrawLines(f.Runs); len(d) > 0 {
		fmt.Fprintf(&b, "**Rates over seeds** (the record is each sale's worst draw; 95%% intervals):\n\n- %s\n\n", strings.Join(d, "\n- "))
	}
	if s := results.Surprises(f.Runs); len(s) > 0 {
		fmt.Fprintf(&b, "**Not as documented:**\n\n- %s\n\n", strings.Join(s, "\n- "))
	}
	WriteMarkdownTable(&b, f.Runs)
	fmt.Fprintf(&b, "\n%s\n", Legend)
	writeLostLocks(&b, f.Runs)
	writeFiredTwice(&b, f.Runs)
	drawn, files := 0, []string(nil)
	for _, fig := range figs {
		if fig.Note == "" {
			drawn++
			files = append(files, fig.Files...)
		}
	}
	switch {
	case len(files) > 0:
		fmt.Fprintf(&b, "\nPlots (%d, in `%s/`, e.g. `%s`) and a table per design: `report.html` in the run directory.\n", drawn, PlotsDir, files[0])
	case drawn > 0:
		fmt.Fprintf(&b, "\nPlots (%d) and a table per design: `report.html` in the run directory.\n", drawn)
	}
	return b.Bytes()
}

// writeChecks writes a check's outcome first, where a CI job summary shows it: every
// threshold broken, or that all held.
func writeChecks(b *bytes.Buffer, checks []results.Check) {
	if len(checks) == 0 {
		return
	}
	broken := results.Broken(checks)
	if len(broken) == 0 {
		fmt.Fprintf(b, "**Check: PASS**, all %d thresholds held.\n\n", len(checks))
		return
	}
	fmt.Fprintf(b, "**Check: FAIL**, %d of %d broken:\n\n- %s\n\n", len(broken), len(checks), strings.Join(broken, "\n- "))
}

// Group is the runs of one scenario under one fault plan: one per implementation.
type Group struct {
	Scenario, Faults string
	Runs             []results.Run
}

// Groups splits runs by scenario and fault plan, in order of first appearance.
func Groups(runs []results.Run) []Group {
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

// writeLostLocks says why holders lost their lock, for the runs where any did: the
// design, or the topology the buyers came through.
func writeLostLocks(b *bytes.Buffer, runs []results.Run) {
	var lines []string
	for i := range runs {
		if l := runs[i].LostLocks; l != nil && l.Lost > 0 {
			lines = append(lines, fmt.Sprintf("%s with %s under %s: %s", runs[i].Subject(), runs[i].Label(), runs[i].FaultPlan(), l))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(b, "\n**Lost locks**, by what took most of the hold:\n\n- %s\n", strings.Join(lines, "\n- "))
	}
}

// writeFiredTwice says, of each scheduled drop whose periodic job ran twice for one
// wave, which wave and who fired it when: what a person looks for in the schedulers'
// logs.
func writeFiredTwice(b *bytes.Buffer, runs []results.Run) {
	var lines []string
	for i := range runs {
		for _, l := range runs[i].Oracle.Schedule.Explain() {
			lines = append(lines, fmt.Sprintf("%s with %s under %s: %s", runs[i].Subject(), runs[i].Label(), runs[i].FaultPlan(), l))
		}
	}
	if len(lines) > 0 {
		fmt.Fprintf(b, "\n**Waves fired twice**, each fire by its scheduler instance:\n\n- %s\n", strings.Join(lines, "\n- "))
	}
}
