package docs

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/trackrecord"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
	"github.com/stockbench/stockbench/scenarios"
)

// ListWidth is the most columns list prints: each name, then its description wrapped
// under it, when a row would be wider (a terminal narrower gets its own width).
const ListWidth = 100

// List prints the designs (with those designs names besides the built-in ones), the
// faults, the scenario presets and the track record, each section a table that fits
// width columns (at most ListWidth).
func List(w io.Writer, designs *catalog.Catalog, width int) error {
	if width <= 0 || width > ListWidth {
		width = ListWidth
	}
	sections := []report.Table{
		{Heads: []string{"LOCK", "HOW", "DOCUMENTED TO OVERSELL UNDER"}, Caption: "LOCK DESIGNS"},
		{Heads: []string{"QUEUE", "HOW", "GUARANTEE"}, Caption: "QUEUE DESIGNS"},
		{Heads: []string{"FAULT", "WHAT", "FOR"}, Caption: "FAULTS"},
		{Heads: []string{"SCENARIO", "WHAT", "DEFAULT MATRIX"}, Caption: "SCENARIOS"},
		{Heads: []string{"BUG (stockbench repro)", "WHAT THE SALE SHOWS", "ISSUES"}, Caption: "THE TRACK RECORD (stockbench repro NAME)"},
	}
	for _, impl := range append(lockimpl.All(), designs.Locks()...) {
		under := oversellsUnder(impl)
		switch {
		case impl.Procs != nil: // an adapter says it in its hello, once a run starts it
			under = "said by the adapter's hello (protocol 2), in each run's record"
		case !impl.Documented.Documented():
			under = "not documented: " + cmp.Or(bench.ShellLine(designs.Source(impl.Name).Flags(results.LockSale, impl.Name)), "built in")
		}
		sections[0].Rows = append(sections[0].Rows, []string{impl.Name, impl.Summary, under})
	}
	for _, impl := range append(queueimpl.All(), designs.Queues()...) {
		sections[1].Rows = append(sections[1].Rows, []string{impl.Name, impl.Summary, cmp.Or(impl.Guarantee, "-")})
	}
	for _, f := range faults.Specs() {
		sections[2].Rows = append(sections[2].Rows, []string{string(f.Kind), f.Summary, fmt.Sprint(f.Applies)})
	}
	for _, p := range scenarios.Presets() {
		sections[3].Rows = append(sections[3].Rows, []string{p.Name, p.Summary, mark(slices.Contains(scenarios.DefaultMatrix, p.Name))})
	}
	for _, p := range scenarios.QueuePresets() {
		sections[3].Rows = append(sections[3].Rows, []string{p.Name, p.Summary, mark(slices.Contains(scenarios.DefaultQueueMatrix, p.Name))})
	}
	for _, e := range trackrecord.All() {
		sections[4].Rows = append(sections[4].Rows, []string{e.Name, e.Library + ": " + e.Shows, e.IssueList()})
	}
	for i := range sections {
		sections[i].Title, sections[i].Plain = 1, 1
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := sections[i].Fit(w, width); err != nil {
			return err
		}
	}
	return nil
}

// oversellsUnder names the faults (or none) under which impl documents that a second
// holder writes.
func oversellsUnder(impl lockimpl.Impl) string {
	v := impl.Documented
	oversells := func(want []oracle.Class) bool {
		return slices.Contains(want, oracle.ClassOversold) && !slices.Contains(want, oracle.ClassSafe)
	}
	var under []string
	if oversells(v.None) {
		under = append(under, faults.None)
	}
	for _, k := range faults.Kinds(faults.Locks) {
		if oversells(v.Under[k]) {
			under = append(under, string(k))
		}
	}
	if len(under) == 0 {
		return "-"
	}
	return strings.Join(under, ", ")
}

func mark(b bool) string {
	if b {
		return "yes"
	}
	return ""
}
