package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Timeline is what happened in run, in order, on the sale's clock: each fault as it
// struck and ended, the worst overlaps of the lock's holders with their leases, and
// the verdict at the end. report.html draws the same as pictures; a page and a report
// to a maintainer need it as text.
func Timeline(run *results.Run) []string {
	type line struct {
		at   time.Duration
		text string
	}
	var lines []line
	for _, e := range run.Events {
		text := fmt.Sprintf("%s: %s", e.Fault, e.Detail)
		if e.Err != "" {
			text += " (failed: " + e.Err + ")"
		}
		if e.Began > 0 {
			lines = append(lines, line{e.Began, fmt.Sprintf("%s struck (over at %s)", e.Fault, ms(e.At))})
		}
		lines = append(lines, line{e.At, text})
	}
	for _, v := range run.Oracle.Violations {
		lines = append(lines,
			line{v.First.Enter, fmt.Sprintf("buyer %d holds the lock, its lease to %s", v.First.Buyer, ms(v.First.Lease))},
			line{v.At, fmt.Sprintf("%s: buyer %d holds it too, its lease to %s, for %s while buyer %d still held it%s",
				v.Class, v.Second.Buyer, ms(v.Second.Lease), ms(v.For), v.First.Buyer, outlived(v))})
	}
	slices.SortStableFunc(lines, func(a, b line) int { return cmp.Compare(a.at, b.at) })
	out := make([]string, 0, len(lines)+1)
	for _, l := range lines {
		text := fmt.Sprintf("%8s  %s", ms(l.at), l.text)
		if len(out) == 0 || out[len(out)-1] != text { // a holder in several violations
			out = append(out, text)
		}
	}
	return append(out, fmt.Sprintf("%8s  ended: %s", ms(run.Duration), run.Verdict.String()))
}

// outlived says, for an overlap, that the first holder had outlived its lease.
func outlived(v oracle.Violation) string {
	if v.Class == oracle.ClassOverlap {
		return " (past its lease)"
	}
	return ""
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
}
