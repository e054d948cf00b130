package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/stockbench/stockbench/results"
)

// WriteMatrix writes m as an aligned text grid.
func WriteMatrix(w io.Writer, m results.Matrix) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s: DESIGN \\ FAULT\t%s\n", m.Scenario, strings.Join(m.Faults, "\t"))
	for _, l := range m.Locks {
		cells := make([]string, len(m.Faults))
		for i, f := range m.Faults {
			cells[i] = m.Cell(l, f)
		}
		fmt.Fprintf(tw, "%s\t%s\n", l, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// WriteMatrixMarkdown writes m as a Markdown table.
func WriteMatrixMarkdown(w io.Writer, m results.Matrix) {
	fmt.Fprintf(w, "| %s: design \\ fault | %s |\n|---|%s\n", m.Scenario, strings.Join(m.Faults, " | "), strings.Repeat("---|", len(m.Faults)))
	for _, l := range m.Locks {
		cells := make([]string, len(m.Faults))
		for i, f := range m.Faults {
			cells[i] = m.Cell(l, f)
		}
		fmt.Fprintf(w, "| %s | %s |\n", l, strings.Join(cells, " | "))
	}
}
