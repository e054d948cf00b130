package explore

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// Finding is what the search found in one region of the space (a fault plan's shape and
// a timing): the kinds of finding each design showed there, and what settling it
// measured: the smallest sale that shows its most promising kind, and every kind's rate
// over reruns of it for every design, with Fisher's exact test of each design against
// the first.
type Finding struct {
	Faults string `json:"faults"`
	Timing string `json:"timing"`
	// Seen is, per kind of finding, how many draws of the search showed it, per design
	// (in Report.Designs' order).
	Seen map[string][]int `json:"seen"`
	// First is the first sale that showed a finding here, of design FirstDesign.
	First       results.Sale `json:"first"`
	FirstRun    results.Run  `json:"-"`
	FirstDesign int          `json:"first_design"`
	// Target is the kind the shrink kept: the most promising (target).
	Target string `json:"target,omitempty"`
	// Smallest is what the shrink found, with the sales it ran; Shrunk is false when it
	// was cut short. Zero when the budget ended before the finding's turn.
	Smallest    results.Sale `json:"smallest"`
	ShrinkSales int          `json:"shrink_sales"`
	Shrunk      bool         `json:"shrunk"`
	// Rates is the smallest sale rerun for every design.
	Rates []Rate `json:"rates,omitempty"`
	// Comparisons are, per kind, each design's rate against the first's.
	Comparisons []Comparison `json:"comparisons,omitempty"`
}

// Signature is the signature of kind found here.
func (f *Finding) Signature(kind string) Signature { return Signature{kind, f.Faults, f.Timing} }

// Kinds are the kinds of finding seen here, in the search or the reruns, most
// promising first.
func (f *Finding) Kinds() []string {
	set := map[string]bool{}
	for k := range f.Seen {
		set[k] = true
	}
	for _, r := range f.Rates {
		for k := range r.Shown {
			set[k] = true
		}
	}
	kinds := slices.Collect(maps.Keys(set))
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(cmp.Compare(f.promiseOf(b), f.promiseOf(a)), cmp.Compare(a, b)) })
	return kinds
}

// Rate is how many of a design's reruns of a smallest sale showed each kind of finding.
type Rate struct {
	Design string         `json:"design"`
	Runs   int            `json:"runs"`
	Shown  map[string]int `json:"shown"`
	// Example is the rerun that found the most (the worst class), for its timeline; nil
	// when none found anything. Draws is every rerun's class and findings.
	Example *results.Run  `json:"-"`
	Draws   results.Draws `json:"-"`
}

func (r *Rate) add(run *results.Run) {
	r.Runs++
	r.Draws.Add(run)
	kinds := findings(run)
	for _, k := range kinds {
		r.Shown[k]++
	}
	if len(kinds) == 0 {
		return
	}
	if r.Example == nil || run.Verdict.Worse(r.Example.Verdict) {
		r.Example = run
	}
}

// Of is kind's rate as k/n with its 95% interval, or "not measured".
func (r Rate) Of(kind string) string {
	if r.Runs == 0 {
		return "not measured"
	}
	return results.Proportion(r.Shown[kind], r.Runs)
}

// Comparison is design B's rate of a kind of finding against design A's: Fisher's
// exact two-sided p-value, and Holm's adjustment of it over every comparison of the
// exploration; Significant when the adjusted value is below Alpha.
type Comparison struct {
	Kind        string  `json:"kind"`
	A           string  `json:"a"`
	B           string  `json:"b"`
	P           float64 `json:"p"`
	Adjusted    float64 `json:"p_holm"`
	Significant bool    `json:"significant"`
	// Worse names the design with the higher rate.
	Worse string `json:"worse,omitempty"`
}

// target is the kind to shrink on: the most promising.
func (f *Finding) target() string { return f.Kinds()[0] }

// promise orders the regions to settle, by their most promising kind.
func (f *Finding) promise() int {
	best := 0
	for k := range f.Seen {
		best = max(best, f.promiseOf(k))
	}
	return best
}

// promiseOf ranks a kind: seen for one design and not another first, then the most
// severe, then the most often seen.
func (f *Finding) promiseOf(kind string) int {
	seen := f.Seen[kind]
	if len(seen) == 0 {
		return severity(kind)
	}
	p := min(slices.Max(seen), 99) + 100*severity(kind)
	if slices.Min(seen) == 0 && len(seen) > 1 {
		p += 10000
	}
	return p
}

// severity ranks a kind of finding: damage to the stock or the orders first.
func severity(kind string) int {
	switch kind {
	case "OVERSOLD", "NEGATIVE", "STOCK-GONE":
		return 9
	case "LOST-UPDATE", "ORDERS", "ORDERS-MISSING", "ORDERS-DUPLICATE", "ORDERS-PHANTOM":
		return 8
	case "LOCK-BROKEN":
		return 7
	case "OVERLAP":
		return 5
	case "STUCK", "ZOMBIE-LOCK":
		return 4
	}
	return 2
}

// Report is what an exploration found, what it covered, and what it tried with no
// finding.
type Report struct {
	Seed    uint64   `json:"seed"`
	Budget  string   `json:"budget"`
	Designs []string `json:"designs"`
	Kind    string   `json:"kind"`
	// Faults are the faults the space held.
	Faults  []string      `json:"faults"`
	Started time.Time     `json:"started_at"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Searched is how long the search took: half the budget at least, more while a
	// fault had struck in fewer than MinStrikes draws, three quarters at most, and then
	// half of any time left over once the regions were settled.
	Searched time.Duration `json:"searched_ns"`
	// RerunCost is what the reruns took against their estimates from their regions'
	// first sales, which the stop rule learnt as measuring went (1 until a few ended).
	RerunCost float64 `json:"rerun_cost,omitempty"`
	// Resumed is how many times the search resumed with the time left over once every
	// region it had found was settled.
	Resumed int `json:"resumed,omitempty"`
	// Redis is the shared server the sales ran beside, as a run's record names it.
	Redis    results.Target `json:"redis"`
	Complete bool           `json:"complete"`
	// Draws is how many points of the space ran on every design; Refused how many a
	// design or the checks refused (passed over); Unfinished how many sales did not
	// finish. Sales is every sale run, the shrinks' and the reruns' included.
	Draws, Refused, Unfinished, Sales int
	SalesPerMinute                    float64    `json:"sales_per_minute"`
	Findings                          []*Finding `json:"findings"`
	// Coverage is, per fault plan shape and timing, how many draws ran and in how many
	// the faults struck, with the kinds of finding seen.
	Coverage []*Cover `json:"coverage"`
	// Struck is how many of the search's sales each fault struck in.
	Struck map[string]int `json:"struck"`
	// Time is where the time went, by phase, and Limit how many sales ran at once.
	Time  []PhaseTime `json:"time"`
	Limit Limit       `json:"limit"`
}

// Cover is what the search did in one region of the space.
type Cover struct {
	Faults   string         `json:"faults"`
	Timing   string         `json:"timing"`
	Sales    int            `json:"sales"`
	Struck   int            `json:"struck"`
	Findings map[string]int `json:"findings,omitempty"`
	// Paced counts the kinds the sales' own pace explained (pacedKinds): left apart,
	// neither a finding nor a region to measure.
	Paced map[string]int `json:"paced,omitempty"`
}

func newReport(cfg Config) *Report {
	r := &Report{Seed: cfg.Seed, Budget: cfg.Budget.String(), Kind: string(cfg.Designs[0].Kind), Started: time.Now().UTC(), Struck: map[string]int{}}
	for _, d := range cfg.Designs {
		name := d.Design
		for n := 2; slices.Contains(r.Designs, name); n++ { // a design against itself
			name = fmt.Sprintf("%s (%d)", d.Design, n)
		}
		r.Designs = append(r.Designs, name)
	}
	for _, k := range cfg.Space.Faults {
		r.Faults = append(r.Faults, string(k))
	}
	return r
}

// cover counts a sale of the search in its region, and returns the faults that struck
// in it.
func (r *Report) cover(s *results.Sale, run *results.Run) (struck []faults.Kind) {
	shape, timing := faultShape(s.Faults), Timing(s)
	i := slices.IndexFunc(r.Coverage, func(c *Cover) bool { return c.Faults == shape && c.Timing == timing })
	if i < 0 {
		r.Coverage = append(r.Coverage, &Cover{Faults: shape, Timing: timing, Findings: map[string]int{}})
		i = len(r.Coverage) - 1
	}
	c := r.Coverage[i]
	c.Sales++
	if len(run.NotExercised) == 0 {
		c.Struck++
	}
	plan, _ := faults.Parse(s.Faults)
	for _, f := range plan {
		if !slices.Contains(run.NotExercised, string(f.Kind)) {
			r.Struck[string(f.Kind)]++
			struck = append(struck, f.Kind)
		}
	}
	for _, k := range findings(run) {
		c.Findings[k]++
	}
	for _, k := range pacedKinds(run) {
		if c.Paced == nil {
			c.Paced = map[string]int{}
		}
		c.Paced[k]++
	}
	return struck
}

// Paced are the regions whose sales left something only the sales' own pace explains,
// with how often: left apart from the findings, and not measured.
func (r *Report) Paced() []string {
	var out []string
	for _, c := range r.Coverage {
		for _, k := range slices.Sorted(maps.Keys(c.Paced)) {
			out = append(out, fmt.Sprintf("%s %s, %s: %d of %d sales", k, Under(c.Faults), c.Timing, c.Paced[k], c.Sales))
		}
	}
	return out
}

// finish adds the findings in the order they were first seen, compares the designs
// with Holm's correction over every comparison, and the figures.
func (r *Report) finish(x *explorer, interrupted bool) {
	r.Elapsed = time.Since(x.start)
	r.Complete = !interrupted
	r.Sales = x.clock.sales()
	r.Time = x.clock.times()
	r.Limit = x.lim.report()
	r.RerunCost = x.learnt.factor()
	if m := r.Elapsed.Minutes(); m > 0 {
		r.SalesPerMinute = float64(r.Sales) / m
	}
	r.Findings = x.regions()
	var all []*Comparison
	for _, f := range r.Findings {
		if len(f.Rates) < 2 || f.Rates[0].Runs == 0 {
			continue
		}
		a := f.Rates[0]
		for _, kind := range f.Kinds() {
			for _, b := range f.Rates[1:] {
				if b.Runs == 0 {
					continue
				}
				ka, kb := a.Shown[kind], b.Shown[kind]
				c := Comparison{Kind: kind, A: a.Design, B: b.Design, P: results.FisherExact(ka, a.Runs, kb, b.Runs)}
				switch ra, rb := float64(ka)/float64(a.Runs), float64(kb)/float64(b.Runs); {
				case rb > ra:
					c.Worse = b.Design
				case rb < ra:
					c.Worse = a.Design
				}
				f.Comparisons = append(f.Comparisons, c)
			}
		}
		for i := range f.Comparisons {
			all = append(all, &f.Comparisons[i])
		}
	}
	holm(all)
	slices.SortStableFunc(r.Coverage, func(a, b *Cover) int { return cmp.Or(cmp.Compare(a.Faults, b.Faults), cmp.Compare(a.Timing, b.Timing)) })
}

// holm adjusts the p-values for the number of comparisons (Holm-Bonferroni, which holds
// the family-wise error rate at Alpha), and marks the significant ones.
func holm(cs []*Comparison) {
	slices.SortStableFunc(cs, func(a, b *Comparison) int { return cmp.Compare(a.P, b.P) })
	m, running := len(cs), 0.0
	for i, c := range cs {
		running = max(running, min(1, c.P*float64(m-i)))
		c.Adjusted = running
		c.Significant = running < Alpha
	}
}

// diff is a significant comparison and the finding it is of.
type diff struct {
	f *Finding
	c Comparison
}

// differences are the significant comparisons, the smallest p first.
func (r *Report) differences() []diff {
	var ds []diff
	for _, f := range r.Findings {
		for _, c := range f.Comparisons {
			if c.Significant {
				ds = append(ds, diff{f, c})
			}
		}
	}
	slices.SortStableFunc(ds, func(a, b diff) int { return cmp.Compare(a.c.P, b.c.P) })
	return ds
}

// Differences are the significant comparisons, the smallest p first, each with its
// finding.
func (r *Report) Differences() []string {
	ds := r.differences()
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return lines
}

// better is the design of the comparison that is not the worse.
func (d diff) better() string {
	if d.c.Worse == d.c.A {
		return d.c.B
	}
	return d.c.A
}

func (d diff) String() string {
	return fmt.Sprintf("%s is worse than %s here: %s %s vs %s, p=%s (Holm %s); %s",
		d.c.Worse, d.better(), d.c.Kind, d.f.rate(d.c.Worse, d.c.Kind), d.f.rate(d.better(), d.c.Kind), pval(d.c.P), pval(d.c.Adjusted), d.f.where())
}

func (f *Finding) rate(design, kind string) string {
	for _, r := range f.Rates {
		if r.Design == design {
			return fmt.Sprintf("%d/%d", r.Shown[kind], r.Runs)
		}
	}
	return "?"
}

// where says under what the finding shows: its smallest sale's faults and timing.
func (f *Finding) where() string {
	s := f.shown()
	return fmt.Sprintf("%s, %s", Under(s.Faults), Timing(&s))
}

// shown is the smallest sale when the shrink ran, else the first.
func (f *Finding) shown() results.Sale {
	if f.Smallest.Design != "" {
		return f.Smallest
	}
	return f.First
}

func pval(p float64) string {
	if p < 0.0001 {
		return fmt.Sprintf("%.1e", p)
	}
	return fmt.Sprintf("%.4f", p)
}

// Quiet are the regions the search ran with its faults striking and found nothing in:
// what was tried with no finding.
func (r *Report) Quiet() []string {
	var out []string
	for _, c := range r.Coverage {
		if len(c.Findings) == 0 && c.Struck > 0 {
			out = append(out, fmt.Sprintf("%s, %s: %d sales", c.Faults, c.Timing, c.Sales))
		}
	}
	return out
}

// SeldomStruck are the faults of the space that struck, in fewer sales than MinStrikes
// draws give every design.
func (r *Report) SeldomStruck() []string {
	var out []string
	for _, k := range r.Faults {
		if n := r.Struck[k]; n > 0 && n < MinStrikes*len(r.Designs) {
			out = append(out, fmt.Sprintf("%s (%d sales)", k, n))
		}
	}
	return out
}

// NeverStruck are the faults of the space that never struck in any sale of the search.
func (r *Report) NeverStruck() []string {
	var out []string
	for _, k := range r.Faults {
		if r.Struck[k] == 0 {
			out = append(out, k)
		}
	}
	return out
}

// WriteMarkdown writes the report as explore.md: the significant differences first,
// then every finding with its rates and its smallest command, what was covered and
// what was tried with no finding.
func (r *Report) WriteMarkdown(w io.Writer, command func(results.Sale) string) {
	fmt.Fprintf(w, "# stockbench explore: %s\n\n", strings.Join(r.Designs, " against "))
	state := "complete"
	if !r.Complete {
		state = "INCOMPLETE (interrupted): what was found until then"
	}
	fmt.Fprintf(w, "Seed %d, budget %s, %s. %d draws of the space on every design (%d refused by a design or the checks), %d sales in %s: %.1f sales a minute.\n\n",
		r.Seed, r.Budget, state, r.Draws, r.Refused, r.Sales, r.Elapsed.Round(time.Second), r.SalesPerMinute)
	fmt.Fprintf(w, "**%s.**\n\n", r.Conclusion(command).Answer)
	if len(r.Designs) > 1 {
		fmt.Fprintf(w, "## Significant differences\n\n")
		d := r.Differences()
		if len(d) == 0 {
			fmt.Fprintf(w, "None: no finding's rate differs between the designs at a family-wise error rate of %g (Fisher's exact test, Holm's correction over %d comparisons).\n\n", Alpha, r.comparisons())
		}
		for _, l := range d {
			fmt.Fprintf(w, "- %s\n", l)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "## Findings\n\n")
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "None in %d draws.\n\n", r.Draws)
	}
	for _, f := range r.Findings {
		fmt.Fprintf(w, "### %s, %s\n\n", strings.ToUpper(Under(f.Faults)[:1])+Under(f.Faults)[1:], f.Timing)
		fmt.Fprintf(w, "| kind | seen in the search (draws) |")
		for _, d := range r.Designs {
			fmt.Fprintf(w, " %s |", d)
		}
		fmt.Fprintf(w, " comparison |\n|---|---|%s---|\n", strings.Repeat("---|", len(r.Designs)))
		for _, k := range f.Kinds() {
			var seen []string
			for i, n := range f.Seen[k] {
				seen = append(seen, fmt.Sprintf("%s %d", r.Designs[i], n))
			}
			fmt.Fprintf(w, "| %s | %s |", k, or(strings.Join(seen, ", "), "-"))
			for i := range r.Designs {
				v := "-"
				if i < len(f.Rates) {
					v = f.Rates[i].Of(k)
				}
				fmt.Fprintf(w, " %s |", v)
			}
			fmt.Fprintf(w, " %s |\n", f.compared(k))
		}
		fmt.Fprintln(w)
		if f.Smallest.Design == "" {
			fmt.Fprintf(w, "Not shrunk nor measured: the budget ended first. First sale: `stockbench %s`\n\n", command(f.First))
			continue
		}
		shrunk := ""
		if !f.Shrunk {
			shrunk = ", cut short by its time"
		}
		fmt.Fprintf(w, "Smallest sale showing %s, after %d shrink sales%s; the rates are %d reruns of it with seeds drawn from its own, per design: `stockbench %s`\n\n",
			f.Target, f.ShrinkSales, shrunk, r.confirm(f), command(f.Smallest))
	}
	fmt.Fprintf(w, "## Covered\n\n| faults | timing | sales | struck | findings |\n|---|---|---|---|---|\n")
	for _, c := range r.Coverage {
		var fs []string
		for _, k := range slices.Sorted(maps.Keys(c.Findings)) {
			fs = append(fs, fmt.Sprintf("%s %d", k, c.Findings[k]))
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %s |\n", c.Faults, c.Timing, c.Sales, c.Struck, strings.Join(fs, ", "))
	}
	r.writeTried(w)
	r.writeTime(w)
}

// writeTried writes what the search tried and found nothing in, what the sales' own pace
// left, and the faults that never struck.
func (r *Report) writeTried(w io.Writer) {
	fmt.Fprintf(w, "\n## Tried with no finding\n\n")
	for _, q := range r.Quiet() {
		fmt.Fprintf(w, "- %s\n", q)
	}
	if p := r.Paced(); len(p) > 0 {
		fmt.Fprintf(w, "\n## Left apart: the sales' own pace\n\nStock left as sales went on until the buyers' patience ran out, no lock left behind: what a busy machine leaves on any design, not a finding; neither steered to nor measured.\n\n")
		for _, l := range p {
			fmt.Fprintf(w, "- %s\n", l)
		}
	}
	if n := r.NeverStruck(); len(n) > 0 {
		fmt.Fprintf(w, "\nNever struck (not drawn, refused by the designs, or their victim never came): %s.\n", strings.Join(n, ", "))
	}
	if n := r.SeldomStruck(); len(n) > 0 {
		fmt.Fprintf(w, "\nStruck in fewer than the %d draws the search waits for (refused by a design, their victim seldom reached, or the search at three quarters of the budget): %s.\n", MinStrikes, strings.Join(n, ", "))
	}
}

func (r *Report) comparisons() int {
	n := 0
	for _, f := range r.Findings {
		n += len(f.Comparisons)
	}
	return n
}

// AllFaults names every fault kind, for a --faults flag's usage.
func AllFaults() string {
	var names []string
	for _, s := range faults.Specs() {
		names = append(names, string(s.Kind))
	}
	return strings.Join(names, ", ")
}

// compared says how kind compared between the designs here.
func (f *Finding) compared(kind string) string {
	var out []string
	for _, c := range f.Comparisons {
		if c.Kind != kind {
			continue
		}
		mark := "not significant"
		if c.Significant {
			mark = "significant, " + c.Worse + " worse"
		}
		out = append(out, fmt.Sprintf("%s vs %s: p=%s, Holm %s, %s", c.B, c.A, pval(c.P), pval(c.Adjusted), mark))
	}
	return or(strings.Join(out, "; "), "-")
}

func (r *Report) confirm(f *Finding) int {
	n := 0
	for _, rt := range f.Rates {
		n = max(n, rt.Runs)
	}
	return n
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
