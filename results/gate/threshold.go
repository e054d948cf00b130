package gate

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// ops are the comparisons a threshold may make, longest first so that "<=" is not read
// as "<".
var ops = []string{"==", "!=", "<=", ">=", "<", ">"}

// Threshold is one condition a run must meet, in k6's spirit: "oversold == 0",
// "p99 < 50ms", "sales_per_sec >= 0.5 * lua". A ratio compares with Factor times the
// same figure of the reference design (Ref) in the same sale and fault plan: a slower
// runner moves both.
type Threshold struct {
	Text   string
	Metric Metric
	Op     string
	// Value is the bound, in the metric's unit (milliseconds for latencies); with Ref,
	// the factor.
	Value float64
	Ref   string
}

// ParseThreshold reads "METRIC OP VALUE", where VALUE is a number (a duration such as
// 50ms for a latency), or "FACTOR * DESIGN".
func ParseThreshold(s string) (Threshold, error) {
	t := Threshold{Text: strings.Join(strings.Fields(s), " ")}
	var lhs, rhs string
	for _, op := range ops {
		if l, r, ok := strings.Cut(s, op); ok {
			lhs, rhs, t.Op = strings.TrimSpace(l), strings.TrimSpace(r), op
			break
		}
	}
	if t.Op == "" {
		return t, fmt.Errorf("%q: want METRIC OP VALUE, as oversold == 0 or p99 < 50ms (ops: %s)", s, strings.Join(ops, " "))
	}
	m, ok := lookupMetric(lhs)
	if !ok {
		return t, fmt.Errorf("%q: unknown metric %q (metrics: %s)", s, lhs, metricNames())
	}
	t.Metric = m.name
	if factor, ref, ok := strings.Cut(rhs, "*"); ok {
		t.Ref = strings.TrimSpace(ref)
		v, err := strconv.ParseFloat(strings.TrimSpace(factor), 64)
		if err != nil || t.Ref == "" || strings.ContainsAny(t.Ref, " *") || !finite(v) || v < 0 {
			return t, fmt.Errorf("%q: a ratio is FACTOR * DESIGN, as 0.5 * lua", s)
		}
		t.Value = v
		return t, nil
	}
	v, err := bound(rhs, m.latency)
	if err != nil {
		return t, fmt.Errorf("%q: %w", s, err)
	}
	t.Value = v
	return t, nil
}

// bound reads a threshold's number: for a latency, a duration (or a bare number of
// milliseconds), as milliseconds.
func bound(s string, latency bool) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && finite(v) {
		return v, nil
	}
	if latency {
		if d, err := time.ParseDuration(s); err == nil {
			return float64(d) / float64(time.Millisecond), nil
		}
		return 0, fmt.Errorf("%q is neither a number of milliseconds nor a duration such as 50ms", s)
	}
	return 0, fmt.Errorf("%q is not a number", s)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (t Threshold) holds(got, bound float64) bool {
	switch t.Op {
	case "==":
		return got == bound
	case "!=":
		return got != bound
	case "<":
		return got < bound
	case "<=":
		return got <= bound
	case ">":
		return got > bound
	}
	return got >= bound
}

// Thresholds are thresholds by the runs they apply to: "*" every run, "DESIGN" a
// design's runs, "DESIGN/FAULTS" its runs under one fault plan; either part may be a
// path.Match pattern. For each run and metric only the most specific selectors that
// match and bound that metric apply (see specificity): "*": ["oversold == 0"] with
// "token/client-pause": ["oversold <= 1"] lets a paused token holder oversell one unit,
// and "oversold >= 0" admits any.
type Thresholds map[string][]Threshold

// Matches reports whether selector sel picks the run of design under plan.
func Matches(sel, design, plan string) bool {
	d, p, hasPlan := strings.Cut(sel, "/")
	if ok, _ := path.Match(d, design); !ok {
		return false
	}
	if !hasPlan {
		return true
	}
	ok, _ := path.Match(p, plan)
	return ok
}

// specificity ranks a selector: a named design and fault plan (3) over a named design
// (2) over a named fault plan (1) over patterns alone (0).
func specificity(sel string) int {
	d, p, _ := strings.Cut(sel, "/")
	literal := func(s string) bool { return s != "" && !strings.ContainsAny(s, `*?[\`) }
	n := 0
	if literal(d) {
		n += 2
	}
	if literal(p) {
		n++
	}
	return n
}

// Check applies th to every run and returns one check per threshold and run it applies
// to, in the runs' order. A run that did not finish, or whose final state could not be
// read, breaks every threshold that needs it; a ratio with no run of its reference
// design in the same sale is broken too: a threshold never passes on missing evidence.
func Check(f *results.File, th Thresholds) []results.Check {
	sels := make([]string, 0, len(th))
	for s := range th {
		sels = append(sels, s)
	}
	sort.Strings(sels)
	var out []results.Check
	for i := range f.Runs {
		r := &f.Runs[i]
		// The most specific rank that bounds each metric, among the matching selectors.
		best := map[Metric]int{}
		for _, sel := range sels {
			if Matches(sel, r.Impl, r.FaultPlan()) {
				for _, t := range th[sel] {
					best[t.Metric] = max(best[t.Metric], specificity(sel))
				}
			}
		}
		for _, sel := range sels {
			if !Matches(sel, r.Impl, r.FaultPlan()) {
				continue
			}
			for _, t := range th[sel] {
				if specificity(sel) < best[t.Metric] {
					continue
				}
				if c, ok := check(f, r, t); ok {
					c.Selector = sel
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func check(f *results.File, r *results.Run, t Threshold) (results.Check, bool) {
	m, _ := lookupMetric(string(t.Metric))
	c := results.Check{Run: r.Key(), Threshold: t.Text}
	got, ok := m.read(r)
	switch {
	case !r.Complete:
		c.Why = "the sale did not finish"
		return c, true
	case m.safety && r.Verdict.Class == oracle.ClassUnknown:
		c.Why = "the final state could not be read"
		return c, true
	case !ok && m.latency:
		c.Why = "nothing sold, no latency to read"
		return c, true
	case !ok:
		return c, false // a figure this kind of sale does not have
	}
	c.Got = &got
	if m.latency {
		c.Unit = "ms"
	}
	bound := t.Value
	if t.Ref != "" {
		ref := find(f, r, t.Ref)
		if ref == nil || !ref.Complete {
			c.Why = fmt.Sprintf("no complete run of %s in the same sale to compare with", t.Ref)
			return c, true
		}
		v, _ := m.read(ref)
		c.Reference = &v
		bound = t.Value * v
	}
	c.Held = t.holds(got, bound)
	return c, true
}
