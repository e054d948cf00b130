package analysis

import (
	"slices"
	"strings"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Standing is how a class seen under a fault stands against the library's claims.
type Standing string

// The standings, as the page words them.
const (
	// Admitted: a claim the library makes of this fault allows the class.
	Admitted Standing = "admitted"
	// Breaks: a claim the library makes of this fault forbids the class, and none
	// allows it.
	Breaks Standing = "breaks a claim"
	// BreaksHold: the library says nothing of the class under this fault, and the class
	// is one every library is held to (HeldTo).
	BreaksHold Standing = "breaks the hold"
	// Unclaimed: neither claimed nor held (a lock left stuck, say, where nothing was
	// said of it): reported, judged by nobody.
	Unclaimed Standing = "unclaimed"
)

// Finding reports whether a class of this standing is a finding: one to shrink, rerun
// and report.
func (s Standing) Finding() bool { return s == Breaks || s == BreaksHold }

// Judgement is a class seen under a fault plan and how it stands: the claims that allow
// it (Admitted) or that it breaks (Breaks).
type Judgement struct {
	Standing Standing
	Claims   []string
}

// Judge is how class, seen under the faults of plan (one cell's fault, or an
// exploration's several; "none" for none), stands against c's claims. Under several
// faults that struck together any of them may be the one to blame: a class any claim of
// any of them allows is admitted; one a fault's claims say nothing of falls to the hold
// (that fault may have caused it); only one every fault's claims forbid breaks them.
func (c *Claims) Judge(plan []string, class oracle.Class) Judgement {
	var forbid []string
	silent := false
	for _, fault := range plan {
		admit, never := c.speak(fault, class)
		if len(admit) > 0 {
			return Judgement{Admitted, admit}
		}
		silent = silent || len(never) == 0
		for _, id := range never {
			if !slices.Contains(forbid, id) {
				forbid = append(forbid, id)
			}
		}
	}
	switch {
	case !silent:
		return Judgement{Breaks, forbid}
	case slices.Contains(HeldTo, class):
		return Judgement{Standing: BreaksHold}
	}
	return Judgement{Standing: Unclaimed}
}

// JudgeCell is how class, seen in cell (a fault as most run, or a deployment's cell),
// stands against c's claims. In a deployment's cell the claims narrowed to that
// deployment speak first, what a doc says of servers run as it prescribes: a class they
// admit is admitted, one they forbid breaks them; of a class they say nothing of, the
// claims of every deployment judge as Judge does.
func (c *Claims) JudgeCell(cell string, class oracle.Class) Judgement {
	if d := c.deploymentOf(cell); d != "" {
		var admit, never []string
		for _, cl := range c.Claims {
			if !slices.Contains(cl.Deployments, d) || !cl.covers(cell) {
				continue
			}
			if slices.Contains(cl.Admits, string(class)) {
				admit = append(admit, cl.ID)
			}
			if slices.Contains(cl.Never, string(class)) {
				never = append(never, cl.ID)
			}
		}
		switch {
		case len(admit) > 0:
			return Judgement{Admitted, admit}
		case len(never) > 0:
			return Judgement{Breaks, never}
		}
	}
	return c.Judge(FaultsOf(cell), class)
}

// Covers reports whether claim cl speaks to cell: by its fault, and, for a claim
// narrowed to deployments, in one of them.
func (c *Claims) Covers(cl Claim, cell string) bool {
	return cl.covers(cell) && (len(cl.Deployments) == 0 || slices.Contains(cl.Deployments, c.deploymentOf(cell)))
}

// speak are the claims of every deployment that speak to fault and allow class, and
// those that forbid it.
func (c *Claims) speak(fault string, class oracle.Class) (admit, never []string) {
	for _, cl := range c.Claims {
		if !cl.covers(fault) || len(cl.Deployments) > 0 {
			continue
		}
		if slices.Contains(cl.Admits, string(class)) {
			admit = append(admit, cl.ID)
		}
		if slices.Contains(cl.Never, string(class)) {
			never = append(never, cl.ID)
		}
	}
	return admit, never
}

// covers reports whether the claim speaks to fault: a fault's name, or a cell's plan
// with its settings (a deployment's), by its fault's name.
func (cl Claim) covers(fault string) bool {
	return slices.Contains(cl.Faults, "*") || slices.Contains(cl.Faults, FaultsOf(fault)[0])
}

// Slowed is the fault an exploration's timing stands for when its holders' work (a
// queue's workers') reaches the lease: a lock's slow-work, a queue's worker-pause.
func Slowed(kind results.SaleKind, timing string) string {
	switch {
	case !strings.HasPrefix(timing, "work >= "):
		return ""
	case kind == results.QueueSale:
		return string(faults.WorkerPause)
	}
	return string(faults.SlowWork)
}

// FaultsOf is the faults of a fault plan as Judge takes them, "none" for none: from a spec
// (client-pause:nth=2+evict) or an exploration's region, whose knobs may be names alone
// (failover+term-holder:p).
func FaultsOf(spec string) []string {
	spec, _ = CellPlan(spec)
	var kinds []string
	for _, part := range strings.Split(spec, "+") {
		if k, _, _ := strings.Cut(part, ":"); k != "" && k != faults.None {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return []string{faults.None}
	}
	return kinds
}

// Cell is one fault's draws, as measured.
type Cell struct {
	Fault string `json:"fault"`
	// Draws are the draws that finished, each with its class and kinds of finding;
	// Unfinished counts those that did not.
	Draws      []results.Draw `json:"draws"`
	Unfinished int            `json:"unfinished,omitempty"`
}

// Seen is a class seen in a cell: in K of its draws.
type Seen struct {
	Class oracle.Class
	K     int
	Judgement
}

// Names are what a claim names and a cell's draws are judged by, most severe first:
// every class of finding, and the lock library's own wrong word (TOLD-HELD, a holder
// told "you hold it" once the next had the lock), next to the broken lock it is the
// library's share of, so that a claim on what the library's answer means speaks to it.
func Names() []oracle.Class {
	var out []oracle.Class
	for _, class := range slices.Backward(oracle.Classes()) {
		if class == oracle.ClassBroken {
			out = append(out, oracle.KindToldHeld)
		}
		if class != oracle.ClassSafe {
			out = append(out, class)
		}
	}
	return out
}

// severityOf places what Names lists in the order of severity, TOLD-HELD with LOCK-BROKEN.
func severityOf(c oracle.Class) int {
	if c == oracle.KindToldHeld {
		c = oracle.ClassBroken
	}
	r, _ := c.Rank()
	return r
}

// Seen are the classes the cell's draws showed, most severe first, each judged by c.
func (cell Cell) Seen(c *Claims) []Seen {
	var out []Seen
	for _, class := range Names() {
		if k := cell.count(class); k > 0 {
			out = append(out, Seen{class, k, c.JudgeCell(cell.Fault, class)})
		}
	}
	return out
}

// count is how many of the cell's judged draws showed class.
func (cell Cell) count(class oracle.Class) int {
	k := 0
	for _, d := range cell.Draws {
		if !unstruck(d) && d.Has(string(class)) {
			k++
		}
	}
	return k
}

// unstruck reports a draw in which the cell's fault never struck: whatever it showed, it
// did not show it under that fault, whose claims must neither excuse nor be charged
// with it. A record from before draws kept Unstruck has only its NOT-EXERCISED class.
func unstruck(d results.Draw) bool { return d.Unstruck || d.Class == oracle.ClassNotExercised }

// Judged is how many of the cell's finished draws its fault struck in: those its counts
// and rates are over.
func (cell Cell) Judged() int { return len(cell.Draws) - cell.NotExercised() }

// Target is the class of the cell to shrink and rerun, if any: its most severe that
// breaks a claim, else its most severe that breaks the hold.
func (cell Cell) Target(c *Claims) (Seen, bool) {
	seen := cell.Seen(c)
	i := slices.IndexFunc(seen, func(s Seen) bool { return s.Standing == Breaks })
	if i < 0 {
		i = slices.IndexFunc(seen, func(s Seen) bool { return s.Standing.Finding() })
	}
	if i < 0 {
		return Seen{}, false
	}
	return seen[i], true
}

// NotExercised counts the draws in which the fault never struck, whatever they showed.
func (cell Cell) NotExercised() int {
	n := 0
	for _, d := range cell.Draws {
		if unstruck(d) {
			n++
		}
	}
	return n
}

// Rate is k of the cell's judged draws with its 95% interval: "7/20 (18%-57%)".
func (cell Cell) Rate(k int) string { return results.Proportion(k, cell.Judged()) }

// joinIDs lists claim ids as the page does.
func joinIDs(ids []string) string { return strings.Join(ids, ", ") }
