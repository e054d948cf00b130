package results

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// Outpaced says why a sale that did worse than its design documents broke a
// premise of that documentation rather than the design's claim, or "" when it did not.
// Two premises are the machine's to keep, not the design's:
//
//   - a verdict that admits no second holder assumes holds end within their lease
//     where no fault stretches them: a second holder first came in beside a holder
//     past its lease, or the lock first broke after a holder had begun its release
//     past its lease (a late plain DEL deletes the next holder's lock), the holder
//     slowed in the harness's own reads, writes and pool waits;
//   - under a fault, buyers' patience outlasts selling the stock: the only STUCK is
//     stock left as sales went on until the buyers gave up, no lock left behind.
//
// A queue's is the first's: a verdict that admits no duplicate assumes a live worker
// acks within the visibility timeout where no fault pauses it.
//
// A starved runner breaks them (a holder's few round trips taking past a 1 s lease,
// beside three busy processes on two CPUs); a TTL or a visibility timeout set too short
// for the work breaks the first. Such a sale, like one whose fault never struck, did not
// put the claim to the test. A broken lock first, a lock left alive, a zombie, harm with
// no fault where stock went unsold, a delivery under a live lease, a queue's loss or
// oversell: "".
func (r *Run) Outpaced() string {
	if !r.Complete || len(r.Expected) == 0 || r.Verdict.Class == oracle.ClassUnknown {
		return ""
	}
	if r.Queue != nil {
		return r.outlivedTasks()
	}
	var why []string
	pace, rerun := "the machine's pace", "rerun on a quieter machine"
	if r.unadmitted(oracle.ClassOverlap, oracle.ClassBroken, oracle.ClassLost, oracle.ClassOversold) {
		w := r.outlived()
		if w == "" {
			return ""
		}
		why = append(why, w)
		pace, rerun = pace+" (or a TTL too short for it)", rerun+" or with a longer --ttl"
	}
	if r.unadmitted(oracle.ClassStuck) {
		if !r.Paced() {
			return ""
		}
		why = append(why, fmt.Sprintf("%d units unsold as sales went on until the buyers' %s patience ran out, no lock left behind",
			r.Oracle.Unsold, r.Params.RetryTimeout))
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + ": " + pace + ", not the design's claim; " + rerun
}

// unadmitted reports whether r shows harm of one of classes that the documented classes
// do not admit.
func (r *Run) unadmitted(classes ...oracle.Class) bool {
	return slices.ContainsFunc(classes, func(c oracle.Class) bool { return r.Damage(c) > 0 && !r.admits(c) })
}

// admits reports whether the documented classes admit harm of class c.
func (r *Run) admits(c oracle.Class) bool {
	return slices.ContainsFunc(r.Expected, func(e oracle.Class) bool { return e.Admits(c) })
}

// outlived says how the first second holder came of a lease outlived, where the
// documentation admits no second holder; "" otherwise. Either it came in beside a
// holder past its lease (an OVERLAP first), or the lock first broke after a holder had
// begun its release past its lease (a late plain DEL removes the next holder's lock).
func (r *Run) outlived() string {
	v, h := r.Oracle.Earliest, r.Oracle.Outlived
	if r.admits(oracle.ClassOverlap) || v == nil {
		return ""
	}
	if l := r.LostLocks; l != nil && l.Paused > 0 {
		return "" // a fault paused holders: the documentation would admit it
	}
	lost := ""
	if l := r.LostLocks; l != nil && l.Lost > 0 {
		lost = " (" + l.String() + ")"
	}
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	switch {
	case v.Class == oracle.ClassOverlap:
		return fmt.Sprintf("a second holder first came in (buyer %d, at %s) after buyer %d had held the lock %s of a %s lease%s",
			v.Second.Buyer, ms(v.At), v.First.Buyer, ms(v.First.Leave-v.First.Enter), ms(v.First.Lease-v.First.Sent), lost)
	case h != nil && h.Leave <= v.At:
		return fmt.Sprintf("the lock first broke (buyer %d came in at %s beside buyer %d) after buyer %d had held it %s of a %s lease, its release late%s",
			v.Second.Buyer, ms(v.At), v.First.Buyer, h.Buyer, ms(h.Leave-h.Enter), ms(h.Lease-h.Sent), lost)
	}
	return ""
}

// outlivedTasks says how every duplicate of a queue sale came as a live worker outlived
// its visibility timeout, where the documentation admits no duplicate and the queue
// broke no lease; "" otherwise.
func (r *Run) outlivedTasks() string {
	q := r.Queue
	if q.DuplicatedEffects == 0 || r.admits(oracle.ClassDuplicated) || q.OutlivedDuplicates < q.DuplicatedEffects ||
		q.Phantom > 0 || q.LeaseOverlaps > 0 {
		return ""
	}
	if r.unadmitted(oracle.ClassOversold, oracle.ClassLost, oracle.ClassReordered) {
		return ""
	}
	return fmt.Sprintf("each of its %d duplicates came as a live worker outlived its %s visibility timeout, and no lease broke: "+
		"the machine's pace (or a visibility timeout too short for the work), not the design's claim; rerun on a quieter machine or with a longer --visibility",
		q.DuplicatedEffects, r.Params.Visibility)
}

// Paced reports whether r's STUCK is only stock left on the shelf under a fault, with
// sales going on until the buyers' patience ran out (SoldToPatience). With no fault the
// design's documented verdict still holds it (and fault-sale's buyers are patient).
func (r *Run) Paced() bool { return r.FaultPlan() != faults.None && r.SoldToPatience() }

// SoldToPatience reports whether r left stock unsold only as its buyers' patience ran out
// with sales still going on: its last sale within a quarter of the patience of the last
// buyer's give-up (the last arrival, then the patience), no lock left alive, no zombie,
// and some stock sold. A busy runner sells a fixed stock more slowly, so buyers of fixed
// patience leave units at its pace; a lock that kept them out stops the sales well
// before they give up. A lock sale only: a queue's orders wait for workers, not buyers.
func (r *Run) SoldToPatience() bool {
	o, p := r.Oracle, r.Params
	patience, err := time.ParseDuration(p.RetryTimeout)
	if r.Kind != LockSale || err != nil || patience <= 0 || p.Waves > 0 {
		return false
	}
	horizon := patience
	if p.Rate > 0 && p.Buyers > 1 { // arrivals spread over N/rate, at the mean of a ramp
		rate := p.Rate
		if p.RampTo > 0 {
			rate = (p.Rate + p.RampTo) / 2
		}
		horizon += time.Duration(float64(p.Buyers-1) / rate * float64(time.Second))
	}
	return o.Unsold > 0 && !o.Stuck && !o.Zombie && o.Bought > 0 && o.LastSale >= horizon-patience/4
}
