package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/trackrecord"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// listCommand is `stockbench list`: the designs (with those of the design files given),
// the faults and the scenario presets.
func listCommand(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("list", "list [--lock-file F] [--queue-file F] [--lock-exec CMD] [--buy-exec CMD]")
	var designs catalogue
	designs.bind(fs)
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	return bench.Complain(stderr, list(stdout, &designs))
}

// list prints the designs, the faults and the scenario presets.
func list(w io.Writer, designs *catalogue) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tHOW\tDOCUMENTED TO OVERSELL UNDER")
	for _, impl := range append(lockimpl.All(), designs.locks()...) {
		under := oversellsUnder(impl)
		switch {
		case impl.Procs != nil: // an adapter says it in its hello, once a run starts it
			under = "said by the adapter's hello (protocol 2), in each run's record"
		case !impl.Documented.Documented():
			under = "not documented: " + or(bench.ShellLine(designs.source(impl.Name)), "built in")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", impl.Name, impl.Summary, under)
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "QUEUE\tHOW\tGUARANTEE")
	for _, impl := range append(queueimpl.All(), designs.queues()...) {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", impl.Name, impl.Summary, or(impl.Guarantee, "-"))
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "FAULT\tWHAT\tFOR")
	for _, s := range faults.Specs() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Kind, s.Summary, s.Applies)
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "SCENARIO\tWHAT\tDEFAULT MATRIX")
	for _, p := range scenarios.Presets() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Summary, yes(slices.Contains(scenarios.DefaultMatrix, p.Name)))
	}
	for _, p := range scenarios.QueuePresets() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Summary, yes(slices.Contains(scenarios.DefaultQueueMatrix, p.Name)))
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "BUG (stockbench repro)\tWHAT THE SALE SHOWS\tISSUES")
	for _, e := range trackrecord.All() {
		fmt.Fprintf(tw, "%s\t%s: %s\t%s\n", e.Name, e.Library, e.Shows, issueList(e))
	}
	return tw.Flush()
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return ""
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
