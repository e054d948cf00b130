package salestest

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/stockbench/stockbench/results"
)

// writeTable writes one line per sale: the fault, the claim, what the sale earned and
// whether that is worse.
func writeTable(w io.Writer, rows []row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FAULTS\tCLAIM\tVERDICT\tSOLD/STOCK\tP99\t")
	for _, rw := range rows {
		mark := ""
		if rw.worse {
			mark = "  <- worse than claimed"
		}
		verdict, sold, p99 := rw.note, "-", "-"
		if r := rw.run; r != nil {
			verdict = r.Verdict.String()
			if rw.note != "" && !r.Complete {
				verdict += " (" + rw.note + ")"
			}
			sold = fmt.Sprintf("%d/%d", bought(r), r.Params.Stock)
			if _, l := r.MainLatency(); l.Count > 0 {
				p99 = results.FormatMicros(l.P99Us)
			}
		}
		if verdict == "" {
			verdict = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", rw.plan, rw.claim, verdict, sold, p99, mark)
	}
	tw.Flush()
}

// bought is the units a run sold.
func bought(r *results.Run) int64 {
	if r.Queue != nil {
		return int64(r.Queue.Fulfilled)
	}
	return int64(r.Oracle.Bought)
}
