package results

import (
	"slices"
)

// Tries is how many times buyers tried for the lock (or, without one, to buy), over the
// buyers that tried at all: what a design's retry loop costs each buyer.
type Tries struct {
	Buyers int     `json:"buyers"`
	Mean   float64 `json:"mean"`
	P50    int32   `json:"p50"`
	P99    int32   `json:"p99"`
	Max    int32   `json:"max"`
}

// NewTries summarises the buyers' tries; zeros (buyers who never tried) are left out.
// It reuses tries for the work, reordering it. It returns nil when no buyer tried.
func NewTries(tries []int32) *Tries {
	tried := tries[:0]
	var sum int64
	for _, n := range tries {
		if n > 0 {
			tried = append(tried, n)
			sum += int64(n)
		}
	}
	if len(tried) == 0 {
		return nil
	}
	slices.Sort(tried)
	at := func(q float64) int32 { return tried[min(len(tried)-1, int(q*float64(len(tried))))] }
	return &Tries{Buyers: len(tried), Mean: float64(sum) / float64(len(tried)), P50: at(0.5), P99: at(0.99), Max: tried[len(tried)-1]}
}
