package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/compare"
	"github.com/stockbench/stockbench/results/report"
)

// compareCommand is `stockbench compare OLD NEW`: per sale, what changed between two
// records, with a significance test on the latency; it judges nothing (gate does) and
// exits 0.
func compareCommand(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("compare", "compare OLD NEW [--alpha P]")
	alpha := fset.Float64("alpha", compare.DefaultAlpha, "the p-value below which a latency shift is significant")
	pos, help, err := parseWithArgs(fset, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if len(pos) != 2 {
		return bench.Complain(stderr, bench.UsageError(errors.New("compare: name two run directories or results files, the old then the new")))
	}
	var files [2]*results.File
	for i, p := range pos {
		if files[i], err = readResults(p); err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("compare: %w", err)))
		}
	}
	rows, err := compare.Records(files[0], files[1], compare.Options{Alpha: *alpha})
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	fmt.Fprintf(stdout, "compare: %s (old) with %s (new), alpha %g\n", files[0].ID, files[1].ID, *alpha)
	report.WriteComparison(stdout, rows, cmp.Or(*alpha, compare.DefaultAlpha), columns)
	return bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("%d sales compared; compare judges nothing (gate does)", len(rows)))
}
