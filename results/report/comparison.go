package report

import (
	"fmt"
	"io"

	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/compare"
)

// WriteComparison writes compare.Records' rows, a row per sale, fitted to width
// columns (0: any); "~" marks a latency shift the test does not
// tell from noise, as benchstat does.
func WriteComparison(w io.Writer, rows []compare.Row, alpha float64, width int) {
	t := Table{Heads: []string{"SALE", "CLASS", "P50", "P99", "SHIFT (p, n)", "SALES/S", "RUNS: P50, SALES/S (p, runs)", "DMG/10K"}, Title: 1}
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
	t.Fit(w, width)
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
