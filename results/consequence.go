package results

import (
	"fmt"
	"strings"
	"time"

	"github.com/stockbench/stockbench/oracle"
)

// Consequence says what the sale's verdict means for the sale, with its figures: the
// words a report writes beside a design's class. It reads the same values as the sale's
// matrix cell (Verdict) and the oracle's figures behind it.
func (r *Run) Consequence() string {
	v, o := r.Verdict, r.Oracle
	var s string
	switch v.Class {
	case oracle.ClassOversold:
		s = fmt.Sprintf("%s sold beyond a stock of %d", count(v.Count, "unit"), o.InitialStock)
		if r.Queue != nil {
			s = fmt.Sprintf("%s fulfilled beyond a stock of %d", count(v.Count, "order"), o.InitialStock)
		}
		if v.Broken {
			s += ", through a broken lock"
		}
	case oracle.ClassLost:
		switch {
		case v.StockGone:
			s = "the stock counter itself lost"
		case r.Queue != nil:
			s = fmt.Sprintf("%s never fulfilled nor refused", count(v.Count, "order"))
		default:
			s = fmt.Sprintf("%s to the stock lost", count(v.Count, "update"))
		}
		if v.Broken {
			s += ", through a broken lock"
		}
	case oracle.ClassDuplicated:
		s = fmt.Sprintf("%s applied twice", count(v.Count, "order"))
		if o.Schedule != nil && o.Schedule.FiredTwice > 0 {
			s = fmt.Sprintf("%s fired twice", count(int64(o.Schedule.FiredTwice), "wave"))
		}
	case oracle.ClassReordered:
		s = fmt.Sprintf("%s handed out ahead of one that waited longer", count(v.Count, "task"))
	case oracle.ClassBroken:
		s = fmt.Sprintf("%s began while another holder was surely inside its lease", count(v.Count, "hold"))
	case oracle.ClassOverlap:
		s = fmt.Sprintf("%s overlapped a holder past its lease", count(v.Count, "hold"))
	case oracle.ClassStuck:
		switch {
		case o.Unsold > 0:
			s = fmt.Sprintf("%d of %d units left unsold while %s gave up", o.Unsold, o.InitialStock, count(int64(o.GaveUpWithStock), "buyer"))
		case o.Schedule != nil && o.Schedule.Missed > 0:
			s = fmt.Sprintf("%s never fired", count(int64(o.Schedule.Missed), "wave"))
		case o.Zombie:
			s = "the lock left alive after its last holder released it"
		default:
			s = "the lock left held with no live holder"
		}
	case oracle.ClassNotExercised:
		s = "the fault never struck (" + strings.Join(r.NotExercised, ", ") + ")"
	case oracle.ClassSafe:
		s = fmt.Sprintf("%d of %d sold, nothing found", o.Bought, o.InitialStock)
	default:
		s = "the final state could not be read"
	}
	if o.StaleRejected > 0 && (v.Class == oracle.ClassBroken || v.Class == oracle.ClassOverlap || v.Class == oracle.ClassStuck) {
		s += fmt.Sprintf("; the fence refused %s", count(o.StaleRejected, "stale read or write"))
	}
	if f := o.FirstToldHeld; f != nil {
		s += fmt.Sprintf("; %s told by the lock's library to go on writing after another had taken the lock (the first %s after buyer %d got in)",
			count(int64(o.ToldHeld), "holder"), f.ToldAfter.Round(time.Microsecond), f.Second.Buyer)
	}
	if o.Withdrew > 0 {
		s += fmt.Sprintf("; %s did not write, told by the lock's library the lock was no longer theirs", count(int64(o.Withdrew), "holder"))
	}
	if !r.Complete {
		s += "; the sale did not finish"
	}
	return s
}

// count is n things, the noun in the plural but for one: "1 unit", "3 units", "2 stale
// reads or writes".
func count(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if first, rest, ok := strings.Cut(noun, " or "); ok {
		return fmt.Sprintf("%d %ss or %ss", n, first, rest)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
