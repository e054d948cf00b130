package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// WriteMatrix writes m as an aligned text grid, or, when that is wider than width
// columns (0: no limit), a record per design with its cells by fault (Table.Fit).
func WriteMatrix(w io.Writer, m results.Matrix, width int) error {
	t := Table{Heads: append([]string{m.Scenario + ": DESIGN \\ FAULT"}, m.Faults...), Caption: m.Scenario + ", by design and fault:"}
	for _, l := range m.Locks {
		row := []string{l}
		for _, f := range m.Faults {
			row = append(row, m.Cell(l, f))
		}
		t.Rows = append(t.Rows, row)
	}
	return t.Fit(w, width)
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
