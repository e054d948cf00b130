package oracle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Verdict is what the oracles concluded of one sale, stored once: its class, the number
// its matrix cell shows, whether the damage came through a broken lock or took the stock
// itself, and every finding in words. The verdict line, the cell and the class are views
// of it.
type Verdict struct {
	Class Class
	// Count is the number the cell shows beside the class (units oversold, updates or
	// orders lost, holds overlapping...); only the classes in counted show one.
	Count int64
	// Broken: the damage (an oversell, a loss) came through a broken lock, not a lease a
	// holder outlived; the cell says BROKEN.
	Broken bool
	// StockGone: the stock counter itself was gone after the sale; the cell says STOCK
	// in place of a count.
	StockGone bool
	// Findings are what was found, most severe first; empty for a sale that found
	// nothing.
	Findings []string
}

// counted are the classes whose cell shows a number.
var counted = []Class{ClassOversold, ClassLost, ClassDuplicated, ClassReordered, ClassBroken, ClassOverlap}

// Cell is the verdict as a matrix cell shows it: the class, with its number where it has
// one, and BROKEN after an oversell or a loss through a broken lock.
func (v Verdict) Cell() string {
	switch {
	case v.StockGone:
		return string(v.Class) + " STOCK"
	case !slices.Contains(counted, v.Class):
		return string(v.Class)
	case v.Broken:
		return fmt.Sprintf("%s %d BROKEN", v.Class, v.Count)
	}
	return fmt.Sprintf("%s %d", v.Class, v.Count)
}

// Worse reports whether v stands before o when one of several is to stand for them all
// (a sale's worst draw, a finding's worst rerun): the more severe class, then the more
// damage.
func (v Verdict) Worse(o Verdict) bool {
	rv, _ := v.Class.Rank()
	ro, _ := o.Class.Rank()
	return rv > ro || rv == ro && v.Count > o.Count
}

// String is the verdict line: every finding, or the class alone when there is none.
func (v Verdict) String() string {
	if len(v.Findings) == 0 {
		return string(v.Class)
	}
	return strings.Join(v.Findings, " ")
}

// WithUnfired is the verdict of a sale whose plan left the faults unfired never
// striking: a note among the findings, and NOT-EXERCISED in place of SAFE.
func (v Verdict) WithUnfired(unfired []string) Verdict {
	v.Findings = slices.Clone(v.Findings)
	if len(unfired) == 0 {
		return v
	}
	if len(v.Findings) == 0 && v.Class != ClassSafe {
		v.Findings = []string{string(v.Class)} // UNKNOWN says so beside the note
	}
	v.Findings = append(v.Findings, string(ClassNotExercised)+" "+strings.Join(unfired, ","))
	v.Class = NotExercised(v.Class, len(unfired))
	return v
}

// ParseVerdict reads a verdict back from its class, cell and findings as a record stores
// them.
func ParseVerdict(class Class, cell string, findings []string) (Verdict, error) {
	v := Verdict{Class: class, Findings: findings}
	rest, ok := strings.CutPrefix(cell, string(class))
	if !ok {
		return v, fmt.Errorf("cell %q is not of class %s", cell, class)
	}
	switch f := strings.Fields(rest); {
	case len(f) == 0:
	case len(f) == 1 && f[0] == "STOCK":
		v.StockGone = true
	case len(f) <= 2:
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || len(f) == 2 && f[1] != "BROKEN" {
			return v, fmt.Errorf("cell %q: want CLASS [N [BROKEN]]", cell)
		}
		v.Count, v.Broken = n, len(f) == 2
	default:
		return v, fmt.Errorf("cell %q: want CLASS [N [BROKEN]]", cell)
	}
	return v, nil
}

// Outcome is the verdict of a flash sale's report.
func (r Report) Outcome() Verdict {
	v := Verdict{Class: r.Class(), Findings: r.Findings()}
	switch v.Class {
	case ClassOversold:
		v.Count, v.Broken = r.Oversold, r.LockBroken > 0
	case ClassLost:
		v.StockGone = r.StockGone
		v.Count = max(abs(r.LostUpdates), abs(r.OrderMismatch), int64(r.MissingOrders+r.DuplicateOrders+r.PhantomOrders))
		v.Broken = r.LockBroken > 0 && !r.StockGone
	case ClassDuplicated:
		v.Count = int64(r.Schedule.Extra)
	case ClassBroken:
		v.Count = int64(r.LockBroken)
	case ClassOverlap:
		v.Count = int64(r.Overlaps)
	}
	return v
}

// Outcome is the verdict of a queue sale's report.
func (r QueueReport) Outcome() Verdict {
	v := Verdict{Class: r.Class(), Findings: r.Findings()}
	switch v.Class {
	case ClassOversold:
		v.Count = r.Oversold
	case ClassLost:
		v.Count = int64(r.Lost)
	case ClassDuplicated:
		v.Count = int64(r.DuplicatedEffects + r.Phantom)
	case ClassReordered:
		v.Count = int64(r.OutOfOrder)
	}
	return v
}
