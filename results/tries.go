package results

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
// It returns nil when no buyer tried.
func NewTries(tries []int32) *Tries {
	var c TryCounts
	for _, n := range tries {
		c.Add(n)
	}
	return c.Tries()
}

// TryCounts counts buyers by how many times they tried, for Tries: one pass and no sort,
// so that a sale of tens of millions of buyers is summarised in a moment.
type TryCounts struct {
	byTries []int64 // buyers by their number of tries
	buyers  int
	sum     int64
}

// Add counts a buyer who tried n times; zero (never tried) is left out.
func (c *TryCounts) Add(n int32) {
	if n <= 0 {
		return
	}
	if int(n) >= len(c.byTries) {
		c.byTries = append(c.byTries, make([]int64, int(n)+1-len(c.byTries))...)
	}
	c.byTries[n]++
	c.buyers++
	c.sum += int64(n)
}

// Tries is the summary of what was counted, nil when no buyer tried.
func (c *TryCounts) Tries() *Tries {
	if c.buyers == 0 {
		return nil
	}
	// at is the number of tries of the buyer at rank q, counting from the fewest.
	at := func(q float64) int32 {
		rank := int64(min(c.buyers-1, int(q*float64(c.buyers))))
		var seen int64
		for n, k := range c.byTries {
			if seen += k; seen > rank {
				return int32(n)
			}
		}
		return int32(len(c.byTries) - 1)
	}
	return &Tries{Buyers: c.buyers, Mean: float64(c.sum) / float64(c.buyers), P50: at(0.5), P99: at(0.99), Max: int32(len(c.byTries) - 1)}
}
