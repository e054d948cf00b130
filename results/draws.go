package results

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/oracle"
)

// Draws is what the draws of one sale earned when it ran with several seeds (--runs):
// how many drew each class and each finding. A race's verdict is a rate, not a draw; the
// record the cell stands on is its worst draw, whose seed reruns it.
type Draws struct {
	// Runs is how many draws finished; Classes and Findings count them.
	Runs    int                  `json:"runs"`
	Classes map[oracle.Class]int `json:"classes"`
	// Findings counts the draws with each kind of finding (LOCK-BROKEN, LOST-UPDATE...).
	Findings map[string]int `json:"findings,omitempty"`
	// Each is every finished draw, in the order they were drawn.
	Each []Draw `json:"each"`
}

// Draw is one draw of a sale run with several seeds: its seed, its class and the kinds
// of its findings.
type Draw struct {
	Seed     uint64       `json:"seed"`
	Class    oracle.Class `json:"class"`
	Findings []string     `json:"findings,omitempty"`
	// Word is what the lock's library told the draw's holders who asked it whether
	// they still held the lock (its first case left out); nil when none asked.
	Word *oracle.Word `json:"word,omitempty"`
	// Unstruck is set when a fault of the draw's plan never struck: what it showed
	// was not shown under that plan.
	Unstruck bool `json:"unstruck,omitempty"`
}

// Has reports whether the draw earned class or found kind, as named. A record from
// before the sales' findings named TOLD-HELD has it in the draw's word.
func (d Draw) Has(name string) bool {
	return string(d.Class) == name || slices.Contains(d.Findings, name) ||
		name == oracle.KindToldHeld && d.Word != nil && d.Word.ToldHeld > 0
}

// DrawOf is a finished run as a draw: its seed, class and kinds of finding.
func DrawOf(run *Run) Draw {
	d := Draw{Seed: run.Params.Seed, Class: run.Verdict.Class, Findings: FindingKinds(run.Verdict), Unstruck: len(run.NotExercised) > 0}
	if w := run.Oracle.Word; w.Asked > 0 {
		w.FirstToldHeld = nil // the sale's own record tells it
		d.Word = &w
	}
	if run.Sale != nil {
		d.Seed = run.Sale.Seed()
	}
	return d
}

// Add counts a finished draw.
func (r *Draws) Add(run *Run) {
	if r.Classes == nil {
		r.Classes, r.Findings = map[oracle.Class]int{}, map[string]int{}
	}
	d := DrawOf(run)
	r.Runs++
	r.Classes[d.Class]++
	for _, k := range d.Findings {
		r.Findings[k]++
	}
	r.Each = append(r.Each, d)
}

// Share is the share of the draws any of which names, by class or kind of finding, 0
// to 1, and how many they are.
func (r *Draws) Share(names ...string) (share float64, k int) {
	for _, d := range r.Each {
		if slices.ContainsFunc(names, d.Has) {
			k++
		}
	}
	if r.Runs == 0 {
		return 0, 0
	}
	return float64(k) / float64(r.Runs), k
}

// Cell is the classes drawn as a matrix cell shows them, most severe first: "LOST 7/10
// SAFE 3/10".
func (r *Draws) Cell() string {
	var parts []string
	for _, c := range r.classes() {
		parts = append(parts, fmt.Sprintf("%s %d/%d", c, r.Classes[c], r.Runs))
	}
	return strings.Join(parts, " ")
}

// classes are the classes drawn, most severe first.
func (r *Draws) classes() []oracle.Class {
	cs := slices.Collect(maps.Keys(r.Classes))
	slices.SortFunc(cs, func(a, b oracle.Class) int {
		ra, _ := a.Rank()
		rb, _ := b.Rank()
		return cmp.Or(cmp.Compare(rb, ra), cmp.Compare(a, b))
	})
	return cs
}

// Lines say each finding's rate with its 95% interval, the most frequent first:
// "LOCK-BROKEN 7/10 (40%-89%)".
func (r *Draws) Lines() []string {
	kinds := slices.Collect(maps.Keys(r.Findings))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(cmp.Compare(r.Findings[b], r.Findings[a]), cmp.Compare(a, b)) })
	lines := make([]string, len(kinds))
	for i, k := range kinds {
		lines[i] = k + " " + Proportion(r.Findings[k], r.Runs)
	}
	return lines
}

// Proportion is k of n with its 95% interval: "7/10 (40%-89%)".
func Proportion(k, n int) string {
	lo, hi := Wilson(k, n)
	return fmt.Sprintf("%d/%d (%s-%s)", k, n, percent(lo), percent(hi))
}

func percent(f float64) string {
	return fmt.Sprintf("%.0f%%", f*100)
}

// Wilson is the 95% Wilson score interval of k successes in n trials: unlike the normal
// approximation, it stays inside 0 to 1 and is not empty at 0 of 10.
func Wilson(k, n int) (low, high float64) {
	if n == 0 {
		return 0, 1
	}
	return wilson(int64(k), n)
}

// FindingKinds are the kinds of finding of v, most severe first: the first word of each
// (LOCK-BROKEN of "LOCK-BROKEN 3"), NOT-EXERCISED left out.
func FindingKinds(v oracle.Verdict) []string {
	var kinds []string
	for _, f := range v.Findings {
		k, _, _ := strings.Cut(f, " ")
		if k != string(oracle.ClassNotExercised) && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// FisherExact is the two-sided p-value of Fisher's exact test that a of n draws of one
// side and b of m of the other come from the same rate: the probability, with the
// margins fixed, of a table at most as likely as the one seen. It is exact at any
// size, where a chi-squared test is not at ten draws a side.
func FisherExact(a, n, b, m int) float64 {
	k := a + b                    // draws with the finding, in all
	logp := func(x int) float64 { // hypergeometric: x of the k among the first side's n
		return lchoose(n, x) + lchoose(m, k-x) - lchoose(n+m, k)
	}
	seen := logp(a)
	p := 0.0
	for x := max(0, k-m); x <= min(k, n); x++ {
		if lp := logp(x); lp <= seen+1e-7 {
			p += math.Exp(lp)
		}
	}
	return min(p, 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// DrawSeed is the seed of the k-th draw of a sale seeded base: base itself for the
// first, so that one draw is the sale run once; a splitmix64 step of base and k for the
// others, so that neighbouring bases do not share draws.
func DrawSeed(base uint64, k int) uint64 {
	if k == 0 {
		return base
	}
	z := base + uint64(k)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
