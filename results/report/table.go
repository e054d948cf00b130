package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// column is a table column: its heading and what each cell shows.
type column struct {
	head string
	cell func(r *results.Run) string
}

// columns of the terminal table and summary.md.
var columns = []column{
	{"SCENARIO", func(r *results.Run) string { return r.Subject() }},
	{"DESIGN", func(r *results.Run) string { return r.Label() }},
	{"FAULTS", func(r *results.Run) string { return r.FaultPlan() }},
	{"VERDICT", func(r *results.Run) string {
		if !r.Complete {
			return r.Verdict.String() + " (incomplete)"
		}
		return r.Verdict.String()
	}},
	{"SOLD/STOCK", func(r *results.Run) string {
		if r.Queue != nil && r.Queue.FinalUnknown { // a queue's sales are read from Redis
			return fmt.Sprintf("?/%d", r.Oracle.InitialStock)
		}
		return fmt.Sprintf("%d/%d", r.Oracle.Bought, r.Oracle.InitialStock)
	}},
	{"FINAL", func(r *results.Run) string {
		if r.Oracle.FinalUnknown {
			return "?"
		}
		return fmt.Sprint(r.Oracle.FinalStock)
	}},
	{"OVERLAPS", func(r *results.Run) string {
		if b := r.Oracle.LockBroken; b > 0 {
			return fmt.Sprintf("%d (%d broken)", r.Oracle.Overlaps, b)
		}
		return fmt.Sprint(r.Oracle.Overlaps)
	}},
	{"GAVE UP*", func(r *results.Run) string { return fmt.Sprint(r.Oracle.GaveUpWithStock) }},
	{"SELL-OUT", func(r *results.Run) string {
		if r.Oracle.SellOut == 0 {
			return "-"
		}
		return results.FormatDuration(r.Oracle.SellOut)
	}},
	{"SALES/S", func(r *results.Run) string {
		if r.SalesPerSec < 100 {
			return fmt.Sprintf("%.1f", r.SalesPerSec)
		}
		return fmt.Sprintf("%.0f", r.SalesPerSec)
	}},
	{"P50", func(r *results.Run) string { return mainQuantile(r, func(l results.Latency) int64 { return l.P50Us }) }},
	{"P99", func(r *results.Run) string { return mainQuantile(r, func(l results.Latency) int64 { return l.P99Us }) }},
	{"P99.9", func(r *results.Run) string { return mainQuantile(r, func(l results.Latency) int64 { return l.P999Us }) }},
	{"DMG/10K (95%)", func(r *results.Run) string { return r.DamageRate.String() }},
	{"CMDS/SALE", func(r *results.Run) string {
		if r.Commands == nil || r.Oracle.Bought == 0 { // per sale of none
			return "-"
		}
		return fmt.Sprintf("%.1f", r.Commands.PerSale)
	}},
}

// Legend explains the columns that need it.
const Legend = "OVERLAPS = holds that began while another was open; (n broken) = those in which both holders were surely inside their leases. " +
	"GAVE UP* = buyers whose retry timeout passed while stock remained. " +
	"P50/P99/P99.9 = whole purchase, from the buyer's start to its confirmed order (for a queue: the order's arrival to its fulfilment; for a scheduled drop: a wave's due time to its fire, SOLD the units its waves put on sale). " +
	"DMG/10K = units oversold or updates lost (for a queue: orders lost or applied twice) per 10,000 sales, with its 95% interval. " +
	"CMDS/SALE = commands Redis ran (INFO commandstats delta) per confirmed order."

// WriteTable writes runs as an aligned text table, or, when that is wider than width
// columns (0: no limit), a record per run (Table.Fit).
func WriteTable(w io.Writer, runs []results.Run, width int) error {
	t := Table{Title: 3}
	for _, c := range columns {
		t.Heads = append(t.Heads, c.head)
	}
	for i := range runs {
		row := make([]string, len(columns))
		for j, c := range columns {
			row[j] = c.cell(&runs[i])
		}
		t.Rows = append(t.Rows, row)
	}
	return t.Fit(w, width)
}

// WriteMarkdownTable writes runs as a Markdown table.
func WriteMarkdownTable(w io.Writer, runs []results.Run) {
	heads := make([]string, len(columns))
	rule := make([]string, len(columns))
	for i, c := range columns {
		heads[i], rule[i] = c.head, "---"
	}
	fmt.Fprintf(w, "| %s |\n| %s |\n", strings.Join(heads, " | "), strings.Join(rule, " | "))
	for i := range runs {
		cells := make([]string, len(columns))
		for j, c := range columns {
			cells[j] = c.cell(&runs[i])
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
}

// wrapped is s in lines of at most width runes, or s as it is for no limit.
func wrapped(s string, width int) string {
	if width <= 0 {
		return s
	}
	return strings.Join(Wrap(s, width), "\n")
}

// mainQuantile prints a quantile of the run's main latency, or "-" when nothing was
// timed (every purchase fell in the warm-up, or none succeeded).
func mainQuantile(r *results.Run, q func(results.Latency) int64) string {
	if _, l := r.MainLatency(); l.Count > 0 {
		return results.FormatMicros(q(l))
	}
	return "-"
}

// WriteReport writes what a terminal shows at the end of a run: a verdict grid for every
// scenario run under several fault plans, the table of figures otherwise, and the
// verdicts that differ from what their implementations document; a grid or table wider
// than width columns (0: no limit) as records, and the legends wrapped to it.
func WriteReport(w io.Writer, runs []results.Run, width int) {
	var rows []results.Run
	for _, m := range results.Matrices(runs) {
		if len(m.Faults) > 1 {
			WriteMatrix(w, m, width)
			fmt.Fprintln(w)
			continue
		}
		for _, r := range runs {
			if r.Subject() == m.Scenario {
				rows = append(rows, r)
			}
		}
	}
	if len(rows) > 0 {
		WriteTable(w, rows, width)
		fmt.Fprintf(w, "\n%s\n", wrapped(Legend, width))
	}
	if len(rows) < len(runs) {
		fmt.Fprintf(w, "%s\n", wrapped(results.MatrixLegend, width))
	}
	if d := DrawLines(runs); len(d) > 0 {
		fmt.Fprintf(w, "\nRates over seeds (the record is each sale's worst draw; 95%% intervals):\n  %s\n", strings.Join(d, "\n  "))
	}
	if s := results.Surprises(runs); len(s) > 0 {
		fmt.Fprintf(w, "\nNot as documented:\n  %s\n", strings.Join(s, "\n  "))
	}
}

// DrawLines say, for each sale run with several seeds (--runs), what its draws earned
// and each finding's rate: "fault-sale/set-nx-ex/slow-work: LOST 7/10 SAFE 3/10;
// LOCK-BROKEN 7/10 (40%-89%)".
func DrawLines(runs []results.Run) []string {
	var out []string
	for i := range runs {
		r := &runs[i]
		if r.Draws == nil || r.Draws.Runs < 2 {
			continue
		}
		line := r.Key() + ": " + r.Draws.Cell()
		if l := r.Draws.Lines(); len(l) > 0 {
			line += "; " + strings.Join(l, ", ")
		}
		out = append(out, line)
	}
	return out
}
