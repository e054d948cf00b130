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
	writeComparison(stdout, rows, cmp.Or(*alpha, compare.DefaultAlpha))
	return bench.ExitOK
}

// writeComparison writes a row per sale; "~" marks a latency shift the test does not
// tell from noise, as benchstat does.
func writeComparison(w io.Writer, rows []compare.Row, alpha float64) {
	t := report.Table{Heads: []string{"SALE", "CLASS", "P50", "P99", "SHIFT (p, n)", "SALES/S", "RUNS: P50, SALES/S (p, runs)", "DMG/10K"}, Title: 1}
	for _, r := range rows {
		class := string(r.New)
		switch {
		case r.Old == "":
			class = "new: " + class
		case r.New == "":
			class = "gone: was " + string(r.Old)
		case r.ClassChanged():
			class = string(r.Old) + " -> " + string(r.New)
		}
		p50, p99, shift := "-", "-", "-"
		if s := r.Latency; s != nil {
			p50 = fmt.Sprintf("%s -> %s", results.FormatMicros(s.OldP50), results.FormatMicros(s.NewP50))
			p99 = fmt.Sprintf("%s -> %s", results.FormatMicros(s.OldP99), results.FormatMicros(s.NewP99))
			shift = "~"
			if s.Significant {
				shift = fmt.Sprintf("%+.0f%%", 100*s.Change())
			}
			shift += fmt.Sprintf(" (%s, n=%d+%d)", pValue(s.P), s.OldN, s.NewN)
		}
		t.Rows = append(t.Rows, []string{r.Key, class, p50, p99, shift,
			fmt.Sprintf("%.0f -> %.0f", r.OldSalesPerSec, r.NewSalesPerSec), runs(r.Runs, alpha), damage(r)})
	}
	t.Fit(w, columns)
}

// pValue writes p, which the normal approximation rounds to 0 far out in its tail.
func pValue(p float64) string {
	if p < 1e-300 {
		return "p<1e-300"
	}
	return fmt.Sprintf("p=%.3g", p)
}

// runs is the speed's test over the runs of each record: each change, "~" when the test
// does not tell it from noise at alpha; "-" without several runs a side.
func runs(s *compare.RunShift, alpha float64) string {
	if s == nil {
		return "-"
	}
	f := func(change, p float64) string {
		if p >= alpha {
			return fmt.Sprintf("~ (p=%.3g)", p)
		}
		return fmt.Sprintf("%+.0f%% (p=%.3g)", 100*change, p)
	}
	return fmt.Sprintf("%s, %s, %d+%d", f(s.P50Change, s.P50P), f(s.SalesChange, s.SalesP), s.OldN, s.NewN)
}

// damage is the two damage rates with their intervals, and "apart" when the intervals do
// not overlap.
func damage(r compare.Row) string {
	f := func(d *results.Rate) string {
		if d == nil {
			return "-"
		}
		return fmt.Sprintf("%.0f (%.0f-%.0f)", d.Per10k, d.Low, d.High)
	}
	s := f(r.OldDamage) + " -> " + f(r.NewDamage)
	if r.DamageApart() {
		s += " apart"
	}
	return s
}
