package oracle

import "slices"

// Class is a verdict reduced to its kind, for stating what a design is expected to earn
// and comparing it with what it earned.
type Class string

// The classes, most severe first.
const (
	ClassOversold Class = "OVERSOLD" // more orders confirmed than stock
	ClassLost     Class = "LOST"     // updates or orders lost, or orders not matching, without an oversell
	// ClassDuplicated: an order's effect applied more than once.
	ClassDuplicated Class = "DUPLICATED"
	// ClassReordered: a task handed out before one that was waiting ahead of it.
	ClassReordered Class = "REORDERED"
	// ClassBroken: two holders at once while both were surely inside their leases, the
	// lock's promise broken (stock intact).
	ClassBroken  Class = "LOCK-BROKEN"
	ClassOverlap Class = "OVERLAP" // two holders at once, one past its lease, stock intact
	// ClassStuck: a lock left alive with no live holder (no TTL, or one past any buyer's
	// wait, or a zombie: alive after its last holder released it), or stock left on the shelf at the end while buyers gave up. Buyers who gave
	// up while others held the lock and the stock sold out anyway are contention, a
	// figure (gave_up), not STUCK.
	ClassStuck Class = "STUCK"
	// ClassNotExercised: nothing was found, but a fault of the plan never struck (its
	// victim never came, or the design has no part it acts on), so the sale says nothing
	// about the design under it.
	ClassNotExercised Class = "NOT-EXERCISED"
	ClassSafe         Class = "SAFE"    // nothing found
	ClassUnknown      Class = "UNKNOWN" // the final state could not be read
)

// NotExercised returns the class a sale earns whose plan left faults unfired: c itself
// when it is a finding, ClassNotExercised in place of SAFE. UNKNOWN stays: without the
// final state nothing at all is known.
func NotExercised(c Class, unfired int) Class {
	if unfired > 0 && c == ClassSafe {
		return ClassNotExercised
	}
	return c
}

// Class returns the most severe class of r.
func (r Report) Class() Class {
	switch {
	case r.Oversold > 0 || r.NegativeStock:
		return ClassOversold
	case r.StockGone || r.LostUpdates != 0 || r.OrderMismatch != 0 || r.MissingOrders+r.DuplicateOrders+r.PhantomOrders > 0:
		return ClassLost
	case r.Schedule != nil && r.Schedule.FiredTwice > 0: // waves of no units
		return ClassDuplicated
	case r.LockBroken > 0:
		return ClassBroken
	case r.Overlaps > 0:
		return ClassOverlap
	// A wave nobody fired is stock left off the shelf, as Unsold is: the scheduler lock
	// kept every instance out.
	case r.Stuck || r.Zombie || r.Unsold > 0 || r.Schedule != nil && r.Schedule.Missed > 0:
		return ClassStuck
	case r.FinalUnknown:
		return ClassUnknown
	}
	return ClassSafe
}

// severity ranks the classes a sale can earn, least severe first. NOT-EXERCISED ranks
// with SAFE: nothing was found. UNKNOWN is not ranked: it is no verdict at all.
var severity = []Class{ClassSafe, ClassStuck, ClassOverlap, ClassBroken, ClassReordered, ClassDuplicated, ClassLost, ClassOversold}

// Rank places c in the order of severity (SAFE and NOT-EXERCISED 0, OVERSOLD highest);
// false for UNKNOWN and anything else that is no class of finding.
func (c Class) Rank() (int, bool) {
	if c == ClassNotExercised {
		c = ClassSafe
	}
	i := slices.Index(severity, c)
	return i, i >= 0
}

// Admits reports whether a claim that a design earns at worst c admits got: got is no
// more severe than c. Nothing admits UNKNOWN, and an unranked claim admits nothing.
func (c Class) Admits(got Class) bool {
	want, ok := c.Rank()
	have, known := got.Rank()
	return ok && known && have <= want
}

// AtMost lists the classes a claim of c admits, least severe first.
func AtMost(c Class) []Class {
	r, ok := c.Rank()
	if !ok {
		return nil
	}
	return append([]Class{ClassNotExercised}, severity[:r+1]...)
}

// Classes lists every class of finding, least severe first, for messages.
func Classes() []Class { return slices.Clone(severity) }

// meanings say what each class means for the sale, in words for a reader who acts on it.
var meanings = map[Class]string{
	ClassOversold:     "oversold: orders confirmed beyond the stock",
	ClassLost:         "lost: updates to the stock, or orders, lost",
	ClassDuplicated:   "applied twice: an order's effect (or a drop's wave) applied more than once",
	ClassReordered:    "out of order: a task handed out ahead of one that waited longer",
	ClassBroken:       "lock broken: two holders at once, both inside their leases; the stock intact",
	ClassOverlap:      "overlap: two holders at once, one past its lease; the stock intact",
	ClassStuck:        "left unsold or stuck: stock left on the shelf while buyers gave up, or a lock left with no live holder",
	ClassNotExercised: "not exercised: a fault never struck, so the sale says nothing of the design under it",
	ClassSafe:         "safe: nothing found",
	ClassUnknown:      "unknown: Redis could not be read after the sale",
}

// Meaning is what c means for the sale, in words: its name, then what happened.
func (c Class) Meaning() string {
	if m, ok := meanings[c]; ok {
		return m
	}
	return string(c)
}
