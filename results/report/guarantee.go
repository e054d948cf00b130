package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// Sheet is the guarantee sheet of one queue scenario (and fulfil): the delivery
// guarantee each design showed under each fault plan, with what became of the tasks its
// dead workers held.
type Sheet struct {
	Scenario string
	Faults   []string
	Rows     []SheetRow
}

// SheetRow is one design's row of a sheet.
type SheetRow struct {
	Design string
	Cells  []SheetCell
}

// SheetCell is a guarantee, with its recovery ("" when no worker died holding a task)
// and its run; Run is nil when that sale did not run.
type SheetCell struct {
	Guarantee results.Guarantee
	Recovery  string
	Run       *results.Run
}

// Text is the cell as a sheet writes it.
func (c SheetCell) Text() string {
	if c.Run == nil {
		return "-"
	}
	if c.Recovery == "" {
		return string(c.Guarantee)
	}
	return string(c.Guarantee) + "; " + c.Recovery
}

// Sheets lays out the queue sales of runs, one sheet per scenario and fulfil; none when
// runs hold no queue sale.
func Sheets(runs []results.Run) []Sheet {
	var sheets []Sheet
	for _, m := range results.Matrices(runs) {
		s := Sheet{Scenario: m.Scenario, Faults: m.Faults}
		for _, d := range m.Locks {
			row := SheetRow{Design: d}
			for _, f := range m.Faults {
				var c SheetCell
				if r := m.Run(d, f); r != nil {
					g, ok := r.Guarantee()
					if !ok {
						continue
					}
					c = SheetCell{Guarantee: g, Recovery: r.RecoveryText(), Run: r}
				}
				row.Cells = append(row.Cells, c)
			}
			if len(row.Cells) == len(m.Faults) {
				s.Rows = append(s.Rows, row)
			}
		}
		if len(s.Rows) > 0 {
			sheets = append(sheets, s)
		}
	}
	return sheets
}

// SheetLegend says what each guarantee means, and what a sheet's cells read.
func SheetLegend() string {
	parts := make([]string, len(results.Guarantees))
	for i, g := range results.Guarantees {
		parts[i] = fmt.Sprintf("%s = %s", g, g.Describe())
	}
	return "Guarantees, as the sale's ledger showed them: " + strings.Join(parts, "; ") + ". " + sheetReading
}

// sheetReading says how to read a sheet's cells.
const sheetReading = "With a naive fulfil it is the queue's own guarantee; with an idempotent one, what such a fulfil makes of it. " +
	"\"n of m back\" = of the m tasks workers died holding, n were delivered again, in the median time given (the slowest in brackets)."

// WriteSheetsMarkdown writes the sheets of runs as Markdown tables with their legend;
// nothing when runs hold no queue sale.
func WriteSheetsMarkdown(w io.Writer, runs []results.Run) {
	sheets := Sheets(runs)
	for _, s := range sheets {
		fmt.Fprintf(w, "| %s: design \\ fault | %s |\n|---|%s\n", s.Scenario, strings.Join(s.Faults, " | "), strings.Repeat("---|", len(s.Faults)))
		for _, row := range s.Rows {
			cells := make([]string, len(row.Cells))
			for i, c := range row.Cells {
				cells[i] = c.Text()
			}
			fmt.Fprintf(w, "| %s | %s |\n", row.Design, strings.Join(cells, " | "))
		}
		fmt.Fprintln(w)
	}
	if len(sheets) == 0 {
		return
	}
	for _, g := range results.Guarantees {
		fmt.Fprintf(w, "- **%s**: %s\n", g, g.Describe())
	}
	fmt.Fprintf(w, "\n%s\n", sheetReading)
}
