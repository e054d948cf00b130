package results

import "github.com/stockbench/stockbench/oracle"

// Damage is how much harm of class c the run shows: 0 when none.
func (r *Run) Damage(c oracle.Class) int64 {
	o, q := r.Oracle, r.Queue
	if q != nil {
		switch c {
		case oracle.ClassOversold:
			return q.Oversold + b2i(q.NegativeStock)
		case oracle.ClassLost:
			return int64(q.Lost)
		case oracle.ClassDuplicated:
			return int64(q.DuplicatedEffects)
		case oracle.ClassReordered:
			return int64(q.OutOfOrder)
		}
		return 0
	}
	switch c {
	case oracle.ClassOversold:
		return o.Oversold + b2i(o.NegativeStock)
	case oracle.ClassLost:
		return abs(o.LostUpdates) + abs(o.OrderMismatch)
	case oracle.ClassOverlap:
		return int64(o.Overlaps)
	case oracle.ClassStuck:
		return int64(o.GaveUpWithStock) + b2i(o.Stuck)
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func abs(n int64) int64 { return max(n, -n) }
