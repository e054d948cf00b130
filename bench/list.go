package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// list prints the registered implementations, the faults and the scenario presets.
func list(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LOCK\tHOW\tDOCUMENTED TO OVERSELL UNDER")
	for _, impl := range lockimpl.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", impl.Name, impl.Summary, oversellsUnder(impl))
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "QUEUE\tHOW\tGUARANTEE")
	for _, impl := range queueimpl.All() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", impl.Name, impl.Summary, impl.Guarantee)
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
	v := scenarios.LockVerdicts(impl.Name)
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
