package explore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// Conclusion is what the exploration concluded, for its report to lead with (see
// results.Exploration); command renders a sale as the command line that runs it.
func (r *Report) Conclusion(command func(results.Sale) string) *results.Exploration {
	x := &results.Exploration{Designs: r.Designs, Comparisons: r.comparisons(), Alpha: Alpha}
	// The most severe kind first: a lock that breaks is worse than one that overlaps,
	// however small the second's p-value.
	ds := r.differences()
	slices.SortStableFunc(ds, func(a, b diff) int { return cmp.Compare(severity(b.c.Kind), severity(a.c.Kind)) })
	for _, d := range ds {
		x.Differences = append(x.Differences, results.Difference{Line: d.String(), Worse: d.c.Worse, Better: d.better(), Kind: d.c.Kind,
			WorseRate: d.f.rate(d.c.Worse, d.c.Kind), BetterRate: d.f.rate(d.better(), d.c.Kind), P: d.c.P, Holm: d.c.Adjusted,
			Region: d.f.where(), Smallest: smallestCommand(d.f, command)})
	}
	for _, f := range r.Findings {
		kind := f.telling()
		g := results.Region{Where: fmt.Sprintf("%s, %s", Under(f.Faults), f.Timing), Kind: kind, Differs: differsIn(f, ds),
			Smallest: smallestCommand(f, command)}
		for i := range r.Designs {
			rate := "not measured"
			if i < len(f.Rates) && f.Rates[i].Runs > 0 {
				rate = fmt.Sprintf("%d/%d", f.Rates[i].Shown[kind], f.Rates[i].Runs)
			}
			g.Rates = append(g.Rates, rate)
		}
		x.Regions = append(x.Regions, g)
	}
	slices.SortStableFunc(x.Regions, func(a, b results.Region) int {
		return cmp.Compare(btoi(b.Differs != ""), btoi(a.Differs != ""))
	})
	x.Answer = r.answer(x)
	return x
}

// answer is the exploration's conclusion in a line.
func (r *Report) answer(x *results.Exploration) string {
	if len(r.Designs) == 1 {
		if len(r.Findings) == 0 {
			return fmt.Sprintf("%s: nothing found in %d draws", r.Designs[0], r.Draws)
		}
		return fmt.Sprintf("%s: findings in %d regions of the space", r.Designs[0], len(r.Findings))
	}
	if len(x.Differences) == 0 {
		return fmt.Sprintf("No design is significantly worse than another here: %d comparisons of the findings' rates, none significant at a family-wise error rate of %g (Fisher's exact test, Holm's correction)",
			x.Comparisons, x.Alpha)
	}
	// Who is worse by the most severe kind that differs, and where.
	d := x.Differences[0]
	var worse []string
	regions := 0
	for _, o := range x.Differences {
		if o.Kind != d.Kind {
			continue
		}
		regions++
		if s := o.Worse + " is worse than " + o.Better; !slices.Contains(worse, s) {
			worse = append(worse, s)
		}
	}
	where := d.Region
	if regions > 1 {
		where = fmt.Sprintf("in %d regions, first %s", regions, d.Region)
	}
	return fmt.Sprintf("%s: %s %s vs %s, p=%s (Holm %s), %s", strings.Join(worse, "; "), d.Kind, d.WorseRate, d.BetterRate, pval(d.P), pval(d.Holm), where)
}

// telling is the kind of finding whose rates tell the designs apart most here: the
// largest spread between their rates, the most promising first among equals; with
// nothing measured, the kind the shrink kept.
func (f *Finding) telling() string {
	kinds := f.Kinds()
	best, spread := kinds[0], -1.0
	for _, k := range kinds {
		var rates []float64
		for _, r := range f.Rates {
			if r.Runs > 0 {
				rates = append(rates, float64(r.Shown[k])/float64(r.Runs))
			}
		}
		if len(rates) == 0 {
			continue
		}
		s := slices.Max(rates) - slices.Min(rates)
		if len(rates) == 1 { // one design: what it shows most
			s = rates[0]
		}
		if s > spread {
			best, spread = k, s
		}
	}
	return best
}

// differsIn says what differs significantly in f, of ds (the most severe first): each
// worse design with the kinds it is worse by, which share a p-value when their counts
// are the same.
func differsIn(f *Finding, ds []diff) string {
	type group struct{ worse, p string }
	var order []group
	kinds := map[group][]string{}
	for _, d := range ds {
		if d.f != f {
			continue
		}
		g := group{d.c.Worse, fmt.Sprintf("p=%s (Holm %s)", pval(d.c.P), pval(d.c.Adjusted))}
		if _, ok := kinds[g]; !ok {
			order = append(order, g)
		}
		kinds[g] = append(kinds[g], d.c.Kind)
	}
	var out []string
	for _, g := range order {
		out = append(out, fmt.Sprintf("%s worse by %s: %s", g.worse, strings.Join(kinds[g], ", "), g.p))
	}
	return strings.Join(out, "; ")
}

// smallestCommand is the command of the finding's smallest sale, "" when it was not
// shrunk.
func smallestCommand(f *Finding, command func(results.Sale) string) string {
	if f.Smallest.Design == "" {
		return ""
	}
	return "stockbench " + command(f.Smallest)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
