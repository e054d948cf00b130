package explore

import (
	"slices"
	"strings"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// Signature is what makes two findings the same one: the kind of finding, the faults it
// showed under with their modes (not their lengths or victims, which a shrink changes),
// and the timing relation of the holders' work to their lease.
type Signature struct {
	Finding string `json:"finding"`
	Faults  string `json:"faults"`
	Timing  string `json:"timing"`
}

func (s Signature) String() string {
	return s.Finding + " " + Under(s.Faults) + ", " + s.Timing
}

// Under says a fault plan's shape as a finding shows under it: "under slow-work", or
// "with no fault".
func Under(shape string) string {
	if shape == faults.None {
		return "with no fault"
	}
	return "under " + shape
}

// faultShape is a plan as a signature names it: each fault's kind with the knobs that
// choose what it does (a mode, a persistence, a rate), sorted; "none" for no fault.
func faultShape(plan string) string {
	p, err := faults.Parse(plan)
	if err != nil || len(p) == 0 {
		return faults.None
	}
	parts := make([]string, len(p))
	for i, f := range p {
		parts[i] = string(f.Kind)
		if f.Mode != "" {
			parts[i] += ":mode=" + f.Mode
		}
		if f.Persist != "" && f.Persist != faults.PersistNone {
			parts[i] += ":persist=" + string(f.Persist)
		}
		if f.P > 0 {
			parts[i] += ":p"
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, "+")
}

// features are what a run reached that a draw may be steered towards: each fault that
// struck, the lock's lifecycle events the oracles saw (a release after the lease
// expired, a renewal after release, a lock left behind, holds lost to work or to a
// pause), under the timing relation of the sale, and each kind of finding.
func features(s *results.Sale, run *results.Run) []string {
	timing := Timing(s)
	var out []string
	p, _ := faults.Parse(s.Faults)
	for _, f := range p {
		if !slices.Contains(run.NotExercised, string(f.Kind)) {
			out = append(out, "struck "+string(f.Kind)+", "+timing)
		}
	}
	for _, k := range findings(run) { // a kind the sale's pace explains is not steered to
		out = append(out, "found "+k+" under "+faultShape(s.Faults))
	}
	if l := run.LostLocks; l != nil {
		for _, c := range l.Causes() {
			if c.N > 0 {
				out = append(out, "hold lost "+c.Name+" under "+faultShape(s.Faults))
			}
		}
	}
	return out
}
