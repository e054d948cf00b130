package results

import (
	"fmt"
	"math"
	"strconv"

	"github.com/stockbench/stockbench/oracle"
)

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
		return abs(o.LostUpdates) + abs(o.OrderMismatch) + b2i(o.StockGone)
	case oracle.ClassBroken:
		return int64(o.LockBroken)
	case oracle.ClassOverlap:
		return int64(o.Overlaps)
	case oracle.ClassStuck:
		return o.Unsold + b2i(o.Stuck) + b2i(o.Zombie)
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

// Rate is a run's damage per 10,000 sales, with a 95% confidence interval: how often a
// design does harm at the traffic the run had, not only whether it can.
type Rate struct {
	// Damaged is the units that did harm: for a flash sale, the larger of the units
	// oversold and the updates lost (a lost update is a unit sold twice, oversold or not
	// yet); for a queue, orders lost, applied twice or beyond the stock.
	Damaged int64 `json:"damaged"`
	// Sales is what the rate is per: confirmed orders (a queue's accepted orders).
	Sales int `json:"sales"`
	// Per10k is Damaged per 10,000 Sales; Low and High bound it (Wilson's interval,
	// each sale damaged or not).
	Per10k float64 `json:"per_10k"`
	Low    float64 `json:"low"`
	High   float64 `json:"high"`
}

// NewRate is the run's damage rate, or nil when it sold nothing (no rate to give) or its
// outcome could not be read.
func (r *Run) NewRate() *Rate {
	var damaged int64
	var sales int
	switch q := r.Queue; {
	case q != nil:
		if q.FinalUnknown {
			return nil
		}
		damaged, sales = int64(q.Lost+q.DuplicatedEffects)+q.Oversold, q.Accepted
	default:
		if r.Oracle.FinalUnknown {
			return nil
		}
		damaged, sales = max(r.Damage(oracle.ClassOversold), r.Damage(oracle.ClassLost)), r.Oracle.Bought
	}
	if sales == 0 {
		return nil
	}
	low, high := wilson(min(damaged, int64(sales)), sales)
	return &Rate{Damaged: damaged, Sales: sales, Per10k: float64(damaged) / float64(sales) * 1e4, Low: low * 1e4, High: high * 1e4}
}

// wilson is the 95% Wilson score interval of k successes in n trials.
func wilson(k int64, n int) (low, high float64) {
	const z = 1.959963984540054
	p, fn := float64(k)/float64(n), float64(n)
	centre := (p + z*z/(2*fn)) / (1 + z*z/fn)
	half := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return max(centre-half, 0), min(centre+half, 1)
}

// String is the rate as the table shows it: "12 (8-17)".
func (r *Rate) String() string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%s (%s-%s)", per10k(r.Per10k), per10k(r.Low), per10k(r.High))
}

func per10k(f float64) string {
	if f < 10 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}
