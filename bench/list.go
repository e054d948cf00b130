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
	for _, k := range faults.Kinds {
		fmt.Fprintf(tw, "%s\t%s\tlocks\n", k, faults.Summary[k])
	}
	for _, k := range faults.QueueKinds {
		if k != faults.RedisRestart {
			fmt.Fprintf(tw, "%s\t%s\tqueues\n", k, faults.Summary[k])
		}
	}
	fmt.Fprintln(tw, "\t\t")
	fmt.Fprintln(tw, "SCENARIO\tWHAT\tDEFAULT MATRIX")
	for _, p := range scenarios.Presets() {
		in := ""
		for _, name := range scenarios.DefaultMatrix {
			if name == p.Name {
				in = "yes"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Summary, in)
	}
	for _, p := range scenarios.QueuePresets() {
		in := ""
		if slices.Contains(scenarios.DefaultQueueMatrix, p.Name) {
			in = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Summary, in)
	}
	return tw.Flush()
}

// oversellsUnder names the faults (or "none") under which impl documents that a second
// holder writes.
func oversellsUnder(impl lockimpl.Impl) string {
	var under []string
	for _, f := range append([]string{"none"}, kindNames(faults.Kinds)...) {
		if want, ok := impl.Expect[f]; ok && slices.Contains(want, oracle.ClassOversold) && !slices.Contains(want, oracle.ClassSafe) {
			under = append(under, f)
		}
	}
	if len(under) == 0 {
		return "-"
	}
	return strings.Join(under, ", ")
}

func kindNames(kinds []faults.Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return names
}
