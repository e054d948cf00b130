// Package compare tells two records of the same sales apart with statistics: per sale, a
// class that changed, the latency's shift with a Mann-Whitney U test over every sample
// of it, and the damage rates with their intervals, as benchstat compares benchmarks.
package compare

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// DefaultAlpha is the significance level a shift must reach when Options set none.
const DefaultAlpha = 0.05

// Options shape a comparison; zero fields take the defaults named.
type Options struct {
	// Alpha is the p-value below which a latency shift is significant. Default:
	// DefaultAlpha.
	Alpha float64
}

// Row is one sale found in both records (or in one of them only).
type Row struct {
	Key string
	// Old and New are the sale's classes; "" where the record lacks the sale.
	Old, New oracle.Class
	// Latency is the shift of the main latency (the purchase, or a queued order's
	// arrival to its fulfilment); nil when either record kept no samples of it.
	Latency *Shift
	// SalesPerSec are the two records' figures: one number per sale, which no test can
	// weigh; the latency's samples are what the test is run on.
	OldSalesPerSec, NewSalesPerSec float64
	// OldDamage and NewDamage are the damage rates per 10,000 sales, with their 95%
	// intervals; nil where a record has none.
	OldDamage, NewDamage *results.Rate
	// Runs tests the sale's speed over its runs (matrix --repeat) where both records
	// ran it at least three times; nil otherwise.
	Runs *RunShift
}

// RunShift is how a sale's speed moved between two records, over the runs of each: the
// change of the median run's median latency and of its sales/s, each with the two-sided
// p-value of an exact Mann-Whitney test over the runs.
type RunShift struct {
	OldN, NewN          int
	P50Change, P50P     float64
	SalesChange, SalesP float64
}

// runShift compares the spreads of o and n; nil unless both have three runs or more.
func runShift(o, n *results.Run) *RunShift {
	if o.Spread == nil || n.Spread == nil || len(o.Spread.P50Us) < 3 || len(n.Spread.P50Us) < 3 {
		return nil
	}
	floats := func(v []int64) []float64 {
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	change := func(a, b []float64) float64 {
		if m := Median(a); m > 0 {
			return Median(b)/m - 1
		}
		return 0
	}
	twoSided := func(a, b []float64) float64 {
		_, up := Exceeds(a, b)
		_, down := Exceeds(b, a)
		return min(1, 2*min(up, down))
	}
	op, np := floats(o.Spread.P50Us), floats(n.Spread.P50Us)
	os, ns := o.Spread.SalesPerSec, n.Spread.SalesPerSec
	return &RunShift{OldN: len(op), NewN: len(np),
		P50Change: change(op, np), P50P: twoSided(op, np), SalesChange: change(os, ns), SalesP: twoSided(os, ns)}
}

// Median of vs, which is not empty: the middle value, or the mean of the middle two.
func Median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// ClassChanged reports whether the sale's class differs between the records.
func (r Row) ClassChanged() bool { return r.Old != r.New }

// DamageApart reports whether the damage rates' 95% intervals do not overlap.
func (r Row) DamageApart() bool {
	a, b := r.OldDamage, r.NewDamage
	return a != nil && b != nil && (a.High < b.Low || b.High < a.Low)
}

// Shift is how a latency moved between two records.
type Shift struct {
	OldP50, NewP50, OldP99, NewP99 int64 // µs
	// OldN and NewN are the samples each record kept.
	OldN, NewN int64
	// U is the Mann-Whitney statistic of the new samples against the old; P its
	// two-sided p-value (normal approximation, corrected for ties). Larger counts the
	// pairs in which the new sample was the larger, ties halved, as a share of all
	// pairs: 0.5 is no shift.
	U, P, Larger float64
	// Significant is P below the comparison's alpha.
	Significant bool
}

// Change is the relative change of the median, new against old.
func (s Shift) Change() float64 {
	if s.OldP50 == 0 {
		return 0
	}
	return float64(s.NewP50)/float64(s.OldP50) - 1
}

// Records compares every sale of old with the same sale of new, matched by their key
// (scenario, design, fault plan), in new's order, then those only old has.
func Records(old, new *results.File, o Options) ([]Row, error) {
	alpha := cmp.Or(o.Alpha, DefaultAlpha)
	if alpha <= 0 || alpha >= 1 {
		return nil, fmt.Errorf("compare: alpha must be between 0 and 1, got %g", alpha)
	}
	byKey := make(map[string]*results.Run, len(old.Runs))
	for i := range old.Runs {
		byKey[old.Runs[i].Key()] = &old.Runs[i]
	}
	var rows []Row
	seen := make(map[string]bool)
	for i := range new.Runs {
		n := &new.Runs[i]
		key := n.Key()
		seen[key] = true
		row := Row{Key: key, New: n.Verdict.Class, NewSalesPerSec: n.SalesPerSec, NewDamage: n.DamageRate}
		if o := byKey[key]; o != nil {
			row.Old, row.OldSalesPerSec, row.OldDamage = o.Verdict.Class, o.SalesPerSec, o.DamageRate
			s, err := shift(o, n, alpha)
			if err != nil {
				return nil, fmt.Errorf("compare %s: %w", key, err)
			}
			row.Latency = s
			row.Runs = runShift(o, n)
		}
		rows = append(rows, row)
	}
	for i := range old.Runs {
		if o := &old.Runs[i]; !seen[o.Key()] {
			rows = append(rows, Row{Key: o.Key(), Old: o.Verdict.Class, OldSalesPerSec: o.SalesPerSec, OldDamage: o.DamageRate})
		}
	}
	return rows, nil
}

// shift compares the main latencies of o and n; nil when either kept no samples.
func shift(o, n *results.Run, alpha float64) (*Shift, error) {
	_, lo := o.MainLatency()
	_, ln := n.MainLatency()
	if lo.Count == 0 || ln.Count == 0 || lo.Hist == "" || ln.Hist == "" {
		return nil, nil
	}
	ho, err := lo.Histogram()
	if err != nil {
		return nil, err
	}
	hn, err := ln.Histogram()
	if err != nil {
		return nil, err
	}
	u, p := MannWhitney(ho, hn)
	s := &Shift{OldP50: lo.P50Us, NewP50: ln.P50Us, OldP99: lo.P99Us, NewP99: ln.P99Us,
		OldN: ho.TotalCount(), NewN: hn.TotalCount(), U: u, P: p}
	s.Larger = u / (float64(s.OldN) * float64(s.NewN))
	s.Significant = p < alpha
	return s, nil
}

// MannWhitney is the Mann-Whitney U test of b's samples against a's, read off their
// histograms: U counts the pairs (one sample of each) in which b's is the larger, ties
// as halves, and p is the two-sided p-value by the normal approximation with the tie
// correction. Samples in one bucket of a histogram are ties. p is 1 when either is
// empty or every sample ties.
func MannWhitney(a, b *hdrhistogram.Histogram) (u, p float64) {
	type bucket struct{ a, b float64 }
	counts := make(map[int64]*bucket)
	add := func(h *hdrhistogram.Histogram, side func(*bucket) *float64) {
		for _, bar := range h.Distribution() {
			if bar.Count == 0 {
				continue
			}
			k := counts[bar.To]
			if k == nil {
				k = &bucket{}
				counts[bar.To] = k
			}
			*side(k) += float64(bar.Count)
		}
	}
	add(a, func(k *bucket) *float64 { return &k.a })
	add(b, func(k *bucket) *float64 { return &k.b })
	values := make([]int64, 0, len(counts))
	for v := range counts {
		values = append(values, v)
	}
	slices.Sort(values)
	var na, nb, below, ties float64 // below: a's samples under the current value
	for _, v := range values {
		k := counts[v]
		u += k.b * (below + k.a/2)
		below += k.a
		na, nb = na+k.a, nb+k.b
		t := k.a + k.b
		ties += t*t*t - t
	}
	n := na + nb
	if na == 0 || nb == 0 {
		return u, 1
	}
	variance := na * nb / 12 * ((n + 1) - ties/(n*(n-1)))
	if variance <= 0 {
		return u, 1
	}
	z := (u - na*nb/2) / math.Sqrt(variance)
	return u, math.Erfc(math.Abs(z) / math.Sqrt2)
}

// Exceeds is the one-sided Mann-Whitney U test over two small sets of figures (a
// figure per run, as several runs of one sale give): u counts the pairs (one of each)
// in which b's is the larger, ties as halves, and p is the chance of a u at least that
// large were both sets drawn alike, from the exact distribution of U (ties counted as
// halves against it, which errs towards a larger p). p is 1 when either set is empty.
func Exceeds(a, b []float64) (u, p float64) {
	for _, x := range a {
		for _, y := range b {
			switch {
			case y > x:
				u++
			case y == x:
				u += 0.5
			}
		}
	}
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return u, 1
	}
	// ways[i][j][k]: arrangements of i a's and j b's whose U is k.
	ways := make([][][]float64, n+1)
	for i := range ways {
		ways[i] = make([][]float64, m+1)
		for j := range ways[i] {
			ways[i][j] = make([]float64, i*j+1)
			switch {
			case i == 0 || j == 0:
				ways[i][j][0] = 1
			default:
				// The largest of all is a b (it beats every a: i more pairs) or an a.
				for k := range ways[i][j] {
					if k >= i {
						ways[i][j][k] += ways[i][j-1][k-i]
					}
					if k < len(ways[i-1][j]) {
						ways[i][j][k] += ways[i-1][j][k]
					}
				}
			}
		}
	}
	var total, tail float64
	for k, w := range ways[n][m] {
		total += w
		if float64(k) >= math.Floor(u) {
			tail += w
		}
	}
	return u, tail / total
}
