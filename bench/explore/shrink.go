package explore

import (
	"cmp"
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// Step is one way to make a sale smaller: the smaller sale, or false when s cannot get
// smaller this way.
type Step struct {
	Name  string
	Apply func(s results.Sale) (results.Sale, bool)
}

// Steps are the ways a shrink makes a sale smaller, preferred in this order. Stock goes first: a sale cannot oversell with fewer buyers than units. Every
// dimension the explorer varies is among them: sizes, work, the TTL with the work and
// the faults scaled alike (the timing kept), each fault's knobs that shrink
// (faults.Knob.Shrinks), a fault of several, an adapter's lock servers.
var Steps = []Step{
	{"stock", halveInt("stock", 1)},
	{"buyers", halveInt("buyers", 1)},
	{"waves", halveInt("waves", 1)},
	{"apps", fewerApps},
	{"workers", halveInt("workers", 1)},
	{"faults", dropFault},
	{"victim", knob("nth", func(f *faults.Fault, _ time.Duration) bool {
		n := cmp.Or(f.Nth, faults.DefaultNth)
		f.Nth = n / 2
		return n > 1
	})},
	{"fault length", knob("for", halveLength)},
	{"clock jump", knob("by", halveLength)},
	{"count", knob("count", func(f *faults.Fault, _ time.Duration) bool {
		n := cmp.Or(f.Count, faults.DefaultCount)
		f.Count = n / 2
		return n > 1
	})},
	{"work", halveDuration("think", time.Millisecond)},
	{"queue work", halveDuration("work", time.Millisecond)},
	{"TTL, work and faults", halveTiming},
	{"lock servers", fewerNodes},
}

// Shrink searches s down to the smallest sale that still earns, as property-based
// testing shrinks a counterexample: each round tries every step once on the sale so
// far, up to parallel of them at once, and keeps the first in Steps' order whose
// smaller sale earns says still shows what s showed; rounds go on until no step
// earns or the deadline passes. run is the smallest sale's run that showed it; tried
// counts the sales earns was asked about.
func Shrink(ctx context.Context, s results.Sale, run results.Run, earns func(context.Context, results.Sale) (results.Run, bool), deadline time.Time, parallel int) (smallest results.Sale, last results.Run, tried int) {
	failed := map[string]bool{}
	for time.Now().Before(deadline) && ctx.Err() == nil {
		var next []results.Sale
		for _, st := range Steps {
			if n, can := st.Apply(s); can && !failed[key(n)] {
				next = append(next, n)
			}
		}
		kept := false
		for i := 0; i < len(next) && !kept && time.Now().Before(deadline) && ctx.Err() == nil; i += max(parallel, 1) {
			batch := next[i:min(i+max(parallel, 1), len(next))]
			runs, oks := make([]results.Run, len(batch)), make([]bool, len(batch))
			var wg sync.WaitGroup
			for j, n := range batch {
				wg.Go(func() { runs[j], oks[j] = earns(ctx, n) })
			}
			wg.Wait()
			tried += len(batch)
			for j, n := range batch {
				if ctx.Err() != nil {
					break
				}
				if !oks[j] {
					failed[key(n)] = true
					continue
				}
				if !kept {
					s, run, kept = n, runs[j], true
				}
			}
		}
		if !kept {
			break
		}
	}
	return s, run, tried
}

func key(s results.Sale) string {
	return strconv.Quote(s.Faults) + " " + strconv.Quote(s.Design) + " " + settingsKey(s)
}

func settingsKey(s results.Sale) string {
	out := ""
	for _, x := range s.Settings {
		out += x.Name + "=" + x.Value + ";"
	}
	if s.Source != nil {
		out += "nodes=" + strconv.Itoa(s.Source.Nodes)
	}
	return out
}

// halveInt halves an integer setting down to least; a setting the sale does not have
// does not shrink.
func halveInt(name string, least int64) func(results.Sale) (results.Sale, bool) {
	return func(s results.Sale) (results.Sale, bool) {
		n, err := strconv.ParseInt(s.Get(name), 10, 64)
		if err != nil || n <= least {
			return s, false
		}
		s = s.Clone()
		s.Set(name, strconv.FormatInt(max(n/2, least), 10))
		return s, true
	}
}

// fewerApps halves the application instances down to one, or to two under a fault that
// strikes one of them while the others go on.
func fewerApps(s results.Sale) (results.Sale, bool) {
	least := int64(1)
	if p, err := faults.Parse(s.Faults); err == nil {
		if _, perApp := p.PerApp(); perApp {
			least = 2
		}
	}
	return halveInt("apps", least)(s)
}

// halveDuration halves a plain duration setting down to least.
func halveDuration(name string, least time.Duration) func(results.Sale) (results.Sale, bool) {
	return func(s results.Sale) (results.Sale, bool) {
		d, err := time.ParseDuration(s.Get(name))
		if err != nil || d < 2*least {
			return s, false
		}
		s = s.Clone()
		s.Set(name, (d / 2).String())
		return s, true
	}
}

// halveTiming halves the TTL, the holders' plain work and the faults' lengths together,
// keeping how they compare: a shorter sale with the same timing. To whole seconds only:
// an EX-based design rounds a TTL up to one, so that 1.5 s would change the lease of one
// design and not another's.
func halveTiming(s results.Sale) (results.Sale, bool) {
	ttl, err := time.ParseDuration(s.Get("ttl"))
	if err != nil || ttl < 2*time.Second || (ttl/2)%time.Second != 0 {
		return s, false // whole seconds only; a sale drawn in milliseconds (Space.Fine) is short already
	}
	think, err := time.ParseDuration(s.Get("think"))
	if err != nil {
		return s, false
	}
	plan, err := faults.Parse(s.Faults)
	if err != nil {
		return s, false
	}
	for i := range plan {
		f := &plan[i]
		if f.For > 0 {
			f.For /= 2
		}
		if f.By > 0 {
			f.By /= 2
		}
	}
	s = s.Clone()
	s.Set("ttl", (ttl / 2).String())
	s.Set("think", (think / 2).String())
	s.Faults = plan.String()
	return s, true
}

// halveLength halves a fault's length (or a clock jump's distance), from its default
// in TTLs when unset.
func halveLength(f *faults.Fault, base time.Duration) bool {
	length := &f.For
	if has(f.Kind, "by") {
		length = &f.By
	}
	if base <= 0 && *length == 0 {
		return false
	}
	d := cmp.Or(*length, time.Duration(float64(base)*faults.DefaultLength))
	*length = d / 2
	return d >= 2*time.Millisecond
}

// knob changes, with change, each fault of the plan that has the knob named key;
// change is given the length a fault's default is counted in (the TTL, or a queue's
// visibility timeout) and reports whether it made the fault smaller.
func knob(key string, change func(f *faults.Fault, base time.Duration) bool) func(results.Sale) (results.Sale, bool) {
	return func(s results.Sale) (results.Sale, bool) {
		plan, err := faults.Parse(s.Faults)
		if err != nil || len(plan) == 0 {
			return s, false
		}
		base, _ := time.ParseDuration(cmp.Or(s.Get("ttl"), s.Get("visibility")))
		changed := false
		for i := range plan {
			if has(plan[i].Kind, key) && (key != "nth" || plan[i].P == 0) { // a rate has no one victim
				changed = change(&plan[i], base) || changed
			}
		}
		if !changed {
			return s, false
		}
		s = s.Clone()
		s.Faults = plan.String()
		return s, true
	}
}

// has reports whether fault kind k has the knob named key and a shrink may reduce it.
func has(k faults.Kind, key string) bool {
	spec, _ := faults.Lookup(k)
	for _, kb := range spec.Knobs() {
		if kb.Key == key && kb.Shrinks {
			return true
		}
	}
	return false
}

// dropFault leaves out the last fault of a plan of several.
func dropFault(s results.Sale) (results.Sale, bool) {
	plan, err := faults.Parse(s.Faults)
	if err != nil || len(plan) < 2 {
		return s, false
	}
	s = s.Clone()
	s.Faults = plan[:len(plan)-1].String()
	return s, true
}

// fewerNodes gives an adapter's lock two servers fewer (Redlock's majorities are of odd
// counts), down to one.
func fewerNodes(s results.Sale) (results.Sale, bool) {
	if s.Source == nil || s.Source.Nodes <= 1 {
		return s, false
	}
	s = s.Clone()
	s.Source.Nodes = max(1, s.Source.Nodes-2)
	return s, true
}
