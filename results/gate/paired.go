package gate

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Speed is a row's speed in one trial: its median purchase latency, its sales/s, and
// the commands Redis ran per sale (0: not counted).
type Speed struct {
	P50Us       float64 `json:"p50_us"`
	SalesPerSec float64 `json:"sales_per_sec"`
	CmdsPerSale float64 `json:"cmds_per_sale,omitempty"`
}

// Trial is one build's speed in one trial, by row (results.Run.Key).
type Trial map[string]Speed

// Pair is one trial of each build, run one right after the other: whatever else the
// machine was doing then, both saw nearly the same of it.
type Pair struct {
	Base, Change Trial
	// BaseFirst: the base ran first in this pair (Order draws it).
	BaseFirst bool `json:"base_first"`
}

// Order is which build runs first in each of n pairs, drawn from seed: a coin per pair,
// so that neither build always runs in the other's wake (a warm cache, a neighbour's
// burst that began with the first of a pair).
func Order(n int, seed uint64) (baseFirst []bool) {
	r := rand.New(rand.NewPCG(seed, 0xab8a))
	for range n {
		baseFirst = append(baseFirst, r.IntN(2) == 0)
	}
	return baseFirst
}

// PairedRow is one row's speed, change against base, judged over the pairs.
type PairedRow struct {
	Key    string `json:"key"`
	Metric string `json:"metric"` // "p50", "sales/s" or "cmds/sale"
	Pairs  int    `json:"pairs"`
	// Rise is the change's mean rise over the base, in the figure's own unit, for a count
	// (cmds/sale): +1 is one more command per sale.
	Rise float64 `json:"rise,omitempty"`
	// count: the figure is a count (pairedMetrics' count), judged by Rise.
	count bool
	// Slowdown is the change's geometric mean ratio to the base over the pairs, minus
	// one, signed so that more is slower: +0.3 is a median latency 30% higher, or sales/s
	// 1/1.3 of the base's. Low and High bound it, 95%.
	Slowdown  float64 `json:"slowdown"`
	Low       float64 `json:"low"`
	High      float64 `json:"high"`
	P         float64 `json:"p"`    // one-sided, paired t on the log ratios: the change is slower
	Holm      float64 `json:"holm"` // P adjusted over every row and metric judged
	Regressed bool    `json:"regressed"`
}

// pairedMetrics are the figures the paired gate judges, each as a log ratio that is
// positive when the change is slower. A time regresses by a share (Rules.MinEffect); a
// count, which a busy runner leaves as it is, by an amount (Rules.MinCommands).
var pairedMetrics = []struct {
	name  string
	slow  func(base, change Speed) float64
	valid func(Speed) bool
	// count is the figure of a count, whose rise is judged in its own unit; nil for a time.
	count func(Speed) float64
}{
	{"p50", func(b, c Speed) float64 { return math.Log(c.P50Us / b.P50Us) }, func(s Speed) bool { return s.P50Us > 0 }, nil},
	{"sales/s", func(b, c Speed) float64 { return math.Log(b.SalesPerSec / c.SalesPerSec) }, func(s Speed) bool { return s.SalesPerSec > 0 }, nil},
	{"cmds/sale", func(b, c Speed) float64 { return math.Log(c.CmdsPerSale / b.CmdsPerSale) }, func(s Speed) bool { return s.CmdsPerSale > 0 },
		func(s Speed) float64 { return s.CmdsPerSale }},
}

// minPairs is the fewest pairs a row is judged on: with fewer, a t interval is wider
// than any slowdown worth a gate.
const minPairs = 3

// JudgePairs judges every row that each trial of both builds measured, by each metric:
// a regression is a slowdown above g.MinEffect (for cmds/sale, a rise of at least
// g.MinCommands) whose one-sided p, Holm-adjusted over every row and metric, is below
// g.Alpha. Rows are in key order, p50, sales/s, then cmds/sale.
func JudgePairs(pairs []Pair, g Rules) []PairedRow {
	if len(pairs) == 0 {
		return nil
	}
	var keys []string
	for k := range pairs[0].Base {
		if !g.ignored(k) && slices.IndexFunc(pairs, func(p Pair) bool { _, b := p.Base[k]; _, c := p.Change[k]; return !b || !c }) < 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var rows []PairedRow
	for _, k := range keys {
		for _, m := range pairedMetrics {
			var d []float64
			rise := 0.0
			for _, p := range pairs {
				if b, c := p.Base[k], p.Change[k]; m.valid(b) && m.valid(c) {
					d = append(d, m.slow(b, c))
					if m.count != nil {
						rise += m.count(c) - m.count(b)
					}
				}
			}
			if len(d) < minPairs {
				continue
			}
			row := pairedRow(k, m.name, d)
			row.Rise, row.count = rise/float64(len(d)), m.count != nil
			rows = append(rows, row)
		}
	}
	holm(rows)
	for i := range rows {
		big := rows[i].Slowdown > g.MinEffect
		if rows[i].count {
			big = rows[i].Rise >= g.MinCommands
		}
		rows[i].Regressed = rows[i].Holm < g.Alpha && big
	}
	return rows
}

// pairedRow is the paired t test of the log ratios d.
func pairedRow(key, metric string, d []float64) PairedRow {
	n := float64(len(d))
	mean := 0.0
	for _, v := range d {
		mean += v
	}
	mean /= n
	ss := 0.0
	for _, v := range d {
		ss += (v - mean) * (v - mean)
	}
	se := math.Sqrt(ss / (n - 1) / n)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	row := PairedRow{Key: key, Metric: metric, Pairs: len(d), Slowdown: math.Expm1(mean)}
	switch {
	case se > 0:
		row.P = 1 - t.CDF(mean/se)
	case mean > 0: // every pair slower by the same: as sure as the pairs can be
		row.P = 0
	default:
		row.P = 1
	}
	q := t.Quantile(0.975)
	row.Low, row.High = math.Expm1(mean-q*se), math.Expm1(mean+q*se)
	return row
}

// holm sets each row's Holm-adjusted p.
func holm(rows []PairedRow) {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(rows[a].P, rows[b].P) })
	run := 0.0
	for rank, i := range idx {
		run = max(run, min(1, float64(len(rows)-rank)*rows[i].P))
		rows[i].Holm = run
	}
}

// WritePaired writes the rows as a Markdown table, a line per row and metric, and
// returns how many regressed.
func WritePaired(w io.Writer, rows []PairedRow, g Rules) (regressed int) {
	fmt.Fprintf(w, "| row | figure | pairs | change (95%%) | p (Holm) | verdict |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		verdict := "ok"
		if r.Regressed {
			verdict, regressed = "**slower**", regressed+1
		}
		lo, hi := pct(r.Low, r.Metric), pct(r.High, r.Metric)
		if r.Metric == "sales/s" { // a fall: the larger slowdown is the lower rate
			lo, hi = hi, lo
		}
		change := pct(r.Slowdown, r.Metric)
		if r.count {
			change = fmt.Sprintf("%+.2f a sale, %s", r.Rise, change)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s (%s to %s) | %.2g (%.2g) | %s |\n", r.Key, r.Metric, r.Pairs,
			change, lo, hi, r.P, r.Holm, verdict)
	}
	fmt.Fprintf(w, "\nA row is slower when its median latency rose, or its sales/s fell, by more than %.0f%%, or Redis ran at least %g more commands per sale (a round trip), with its Holm-adjusted p below %g.\n",
		100*g.MinEffect, g.MinCommands, g.Alpha)
	return regressed
}

// pct writes a slowdown as the figure moved: a latency's rise, or a rate's fall.
func pct(s float64, metric string) string {
	if metric == "sales/s" {
		return fmt.Sprintf("%+.1f%%", 100*(1/(1+s)-1))
	}
	return fmt.Sprintf("%+.1f%%", 100*s)
}
