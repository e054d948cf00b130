package results

import (
	"fmt"
	"slices"
	"strings"
)

// Matrix is the runs of one scenario laid out as implementations by fault plans, each cell
// a verdict.
type Matrix struct {
	Scenario      string
	Locks, Faults []string
	cells         map[[2]string]*Run
}

// Matrices lays out runs, one matrix per scenario.
func Matrices(runs []Run) []Matrix {
	var ms []Matrix
	for i := range runs {
		r := &runs[i]
		k := slices.IndexFunc(ms, func(m Matrix) bool { return m.Scenario == r.Subject() })
		if k < 0 {
			ms = append(ms, Matrix{Scenario: r.Subject(), cells: make(map[[2]string]*Run)})
			k = len(ms) - 1
		}
		m := &ms[k]
		if !slices.Contains(m.Locks, r.Label()) {
			m.Locks = append(m.Locks, r.Label())
		}
		if !slices.Contains(m.Faults, r.FaultPlan()) {
			m.Faults = append(m.Faults, r.FaultPlan())
		}
		m.cells[[2]string{r.Label(), r.FaultPlan()}] = r
	}
	return ms
}

// Run is the sale of lock under faults, nil when it did not run.
func (m Matrix) Run(lock, faults string) *Run { return m.cells[[2]string{lock, faults}] }

// Cell is the verdict of lock under faults, marked "!" when it is not what the lock
// documents, "~" when its reruns did not all earn it, and "-" when that sale did not run.
func (m Matrix) Cell(lock, faults string) string {
	r, ok := m.cells[[2]string{lock, faults}]
	if !ok {
		return "-"
	}
	c := r.Verdict.Cell()
	if r.Draws != nil && r.Draws.Runs > 1 {
		c = r.Draws.Cell()
	}
	if r.AsExpected != nil && !*r.AsExpected {
		c += "!"
	}
	if !r.Repeats.Steady() {
		c += "~"
	}
	if !r.Complete {
		c += "?"
	}
	return c
}

// MatrixLegend explains the marks in a matrix.
const MatrixLegend = "Cells: SAFE, OVERLAP n (two holders at once, one past its lease, stock intact), " +
	"LOCK-BROKEN n (two holders at once, both inside their leases: the lock broke its promise, stock intact), " +
	"STUCK (a lock left for good or alive with no holder, " +
	"or stock left on the shelf while buyers gave up), LOST n (lost updates; for a queue, orders never fulfilled nor refused), " +
	"DUPLICATED n (an order applied more than once, or applied though nobody placed it), REORDERED n (a task handed out ahead of one waiting longer), " +
	"OVERSOLD n (orders beyond the stock); BROKEN after a number: through a broken lock, not an outlived lease; NOT-EXERCISED (nothing found, but a fault never struck: its victim never came, " +
	"or the design has no part it acts on), UNKNOWN (Redis could not be read after the sale). " +
	"LOST 3/10 SAFE 7/10: a sale run with ten seeds (--runs 10), and what each drew. " +
	"! = not the verdict the design documents for that fault (with several seeds: its worst draw); " +
	"~ = not every rerun (stockbench replay) earned this class; " +
	"? = the sale did not finish."

// Surprises lists, one line each, the runs whose verdict is not what their
// implementation documents, and why when the machine's pace broke the documentation's
// premise (Run.Outpaced).
func Surprises(runs []Run) []string {
	var out []string
	for _, r := range runs {
		if r.AsExpected != nil && !*r.AsExpected {
			want := make([]string, len(r.Expected))
			for i, c := range r.Expected {
				want[i] = string(c)
			}
			line := fmt.Sprintf("%s with %s under %s: %s, documented %s",
				r.Subject(), r.Impl, r.FaultPlan(), r.Verdict.Cell(), strings.Join(want, " or "))
			if why := r.Outpaced(); why != "" {
				line += "; outpaced, not put to the test: " + why
			}
			out = append(out, line)
		}
	}
	return out
}
