package scenarios

import (
	"math"
	"time"
)

// arrival is when buyer i of n arrives, from the start of the sale, under an open load
// whose rate goes linearly from r0 to r1 across the arrivals. With arrivals A(t) =
// r0·t + (r1-r0)·t²/(2T) and T = 2n/(r0+r1), buyer i arrives at the t where A(t) = i.
func arrival(i, n int, r0, r1 float64) time.Duration {
	if r1 == 0 || r1 == r0 {
		return time.Duration(float64(i) / r0 * float64(time.Second))
	}
	total := 2 * float64(n) / (r0 + r1)
	a := (r1 - r0) / (2 * total)
	t := (-r0 + math.Sqrt(r0*r0+4*a*float64(i))) / (2 * a)
	return time.Duration(t * float64(time.Second))
}
