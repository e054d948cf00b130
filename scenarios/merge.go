package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Merge joins the parts of a sharded flash sale, one from each shard, into the record
// of the whole sale, as one process running it would have written it: the latency
// histograms added (each part keeps its own whole, so nothing is rounded), the counters
// summed, the ledgers joined with every buyer back at its number, and the oracles run on
// the union with the outcome the first shard read. Overlaps are what the witness counted
// in the stock store, since the shards' clocks do not compare. Parts of different sales,
// a shard given twice or one missing are refused, naming the part (its Run.Source).
func Merge(parts []results.Part) (results.Run, error) {
	if len(parts) == 0 {
		return results.Run{}, errors.New("merge: no shard given")
	}
	slices.SortStableFunc(parts, func(a, b results.Part) int { return cmp.Compare(index(a), index(b)) })
	lost, err := sameSale(parts)
	if err != nil {
		return results.Run{}, err
	}
	if parts[0].Run.Kind == results.QueueSale {
		return mergeQueue(parts, lost)
	}
	first := &parts[0].Run
	ledger := join(parts)
	// The first shard read the final state before shards it took for lost had finished,
	// if any did: a shard stalled past the silence that came back. That state then
	// misses their purchases, and only what stands without them is judged.
	var r oracle.Report
	if len(lost) == 0 && len(parts[0].Run.Shard.Lost) == 0 {
		r = oracle.Check(ledger, parts[0].Final)
	} else {
		r = partialCheck(ledger, parts)
	}
	plan, err := faults.Parse(first.FaultPlan())
	if err != nil {
		return results.Run{}, fmt.Errorf("merge: %s: %w", first.Source, err)
	}
	run := results.Run{
		Scenario: first.Scenario, Impl: first.Impl, Params: first.Params, Kind: results.LockSale, Complete: true,
		Oracle: r, Shard: &results.ShardInfo{Count: first.Shard.Count, Merged: true, Attempt: first.Shard.Attempt},
	}
	gather(&run, parts, lost)
	// The shards' records name the design; a built-in one's documented verdicts judge
	// the union, as they judge a sale run in one process.
	var want []oracle.Class
	if impl, err := lockimpl.Lookup(run.Impl); err == nil {
		want, _ = impl.Documented.For(plan)
	}
	run.Judge(r.Outcome(), unfiredAll(parts), want)
	run.Undocumented = first.Undocumented
	fromLedger(&run, r, ledger.Entries)
	if run.Latency, err = addLatencies(parts); err != nil {
		return results.Run{}, err
	}
	if c := first.Commands; c != nil { // the first shard counted every shard's commands
		merged := *c
		merged.PerSale, merged.CPUPerSaleUs = 0, 0
		if r.Bought > 0 {
			merged.PerSale = float64(c.Total) / float64(r.Bought)
			merged.CPUPerSaleUs = float64(c.CPUUs) / float64(r.Bought)
		}
		run.Commands = &merged
	}
	run.DamageRate = run.NewRate()
	return run, nil
}

// gather fills run with what every part measured: its start and length, the errors, the
// fault events, the logs and the locks lost; run is incomplete when a part is, or when
// the shards lost are missing.
func gather(run *results.Run, parts []results.Part, lost []int) {
	var errs []string
	end := time.Time{}
	held := 0
	for i := range parts {
		held += partBuyers(&parts[i])
		p := &parts[i].Run
		if !p.Complete {
			run.Complete = false
			errs = append(errs, fmt.Sprintf("shard %d: %s", p.Shard.Index, p.Error))
		}
		if run.Started.IsZero() || p.Started.Before(run.Started) {
			run.Started = p.Started
		}
		if e := p.Started.Add(p.Duration); e.After(end) {
			end = e
		}
		run.Shard.Late = max(run.Shard.Late, p.Shard.Late)
		run.Errors += p.Errors
		run.FirstError = cmp.Or(run.FirstError, p.FirstError)
		run.Events = append(run.Events, p.Events...)
		if p.Log != "" {
			run.Log = strings.TrimSpace(run.Log + "\n" + p.Log)
		}
		if p.LostLocks != nil {
			if run.LostLocks == nil {
				run.LostLocks = new(results.LostLocks)
			}
			run.LostLocks.Add(*p.LostLocks)
		}
	}
	if len(lost) > 0 {
		first := &parts[0].Run
		run.Complete, run.Shard.Lost = false, lost
		errs = append([]string{fmt.Sprintf("shard %s of %d lost: no record of %d of the %d buyers, whose outcomes are unknown (rerun the whole sale under the same run id to replace it)",
			joinInts(lost), first.Shard.Count, first.Params.Buyers-held, first.Params.Buyers)}, errs...)
	}
	run.Error = strings.Join(errs, "; ")
	run.Duration = end.Sub(run.Started)
	slices.SortStableFunc(run.Events, func(a, b faults.Event) int { return cmp.Compare(a.At, b.At) })
}

// partBuyers is how many of the sale's buyers p holds.
func partBuyers(p *results.Part) int {
	if p.Queue != nil {
		return len(p.Queue.Orders)
	}
	return len(p.Entries)
}

func index(p results.Part) int {
	if p.Run.Shard == nil {
		return -1
	}
	return p.Run.Shard.Index
}

// sameSale says which part does not belong with the first (sorted by shard), or which
// is given twice, and returns the shards none of the parts is (lost).
func sameSale(parts []results.Part) (lost []int, err error) {
	a := &parts[0]
	if a.Run.Shard == nil || a.Run.Shard.Merged {
		return nil, fmt.Errorf("merge: %s is no shard's record", a.Run.Source)
	}
	n := a.Run.Shard.Count
	for i := range parts {
		b := &parts[i]
		switch {
		case b.Run.Shard == nil || b.Run.Shard.Merged:
			return nil, fmt.Errorf("merge: %s is no shard's record", b.Run.Source)
		case b.ID != a.ID:
			return nil, fmt.Errorf("merge: %s is of run %s, %s of run %s", b.Run.Source, b.ID, a.Run.Source, a.ID)
		case b.Run.Shard.Count != n:
			return nil, fmt.Errorf("merge: %s is a shard of %d, %s of %d", b.Run.Source, b.Run.Shard.Count, a.Run.Source, n)
		case b.Run.Impl != a.Run.Impl || b.Run.Scenario != a.Run.Scenario || b.Run.Params != a.Run.Params:
			return nil, fmt.Errorf("merge: %s ran a different sale from %s (%s)", b.Run.Source, a.Run.Source, saleDiff(a.Run, b.Run))
		case b.Run.Shard.Attempt != a.Run.Shard.Attempt && b.Run.Shard.Attempt != 0 && a.Run.Shard.Attempt != 0:
			return nil, fmt.Errorf("merge: %s and %s are of different attempts at run %s (started %s apart): rerun the whole sale, whose shards then replace them all",
				a.Run.Source, b.Run.Source, a.ID, (time.Duration(b.Run.Shard.Attempt-a.Run.Shard.Attempt) * time.Microsecond).Abs().Round(time.Millisecond))
		case i > 0 && b.Run.Shard.Index == parts[i-1].Run.Shard.Index:
			return nil, fmt.Errorf("merge: shard %d of %d is given twice (%s, %s)", b.Run.Shard.Index, n, parts[i-1].Run.Source, b.Run.Source)
		case b.Run.Kind != a.Run.Kind:
			return nil, fmt.Errorf("merge: %s is a %s sale's shard, %s a %s sale's", b.Run.Source, b.Run.Kind, a.Run.Source, a.Run.Kind)
		case partBuyers(b) != Shard{Index: b.Run.Shard.Index, Count: n}.buyers(b.Run.Params.Buyers):
			return nil, fmt.Errorf("merge: %s holds %d buyers, not shard %d's share of %d", b.Run.Source, partBuyers(b), b.Run.Shard.Index, b.Run.Params.Buyers)
		}
	}
	have := map[int]bool{}
	for _, p := range parts {
		have[p.Run.Shard.Index] = true
	}
	for i := range n {
		if !have[i] {
			lost = append(lost, i)
		}
	}
	if len(lost) == 0 && parts[0].Final == nil && parts[0].QueueFinal == nil && parts[0].Run.Complete {
		return nil, fmt.Errorf("merge: %s, the first shard, holds no final state (final.json)", parts[0].Run.Source)
	}
	return lost, nil
}

// partialCheck judges the parts of a sale some of whose shards were lost. Their buyers
// stay pending in the ledger, so what they bought is unknown: the checks that compare
// the buyers with the final state cannot run, and the verdict is UNKNOWN unless what
// stands without them shows damage: the survivors alone bought more than the stock, the
// final stock is below zero, or the witness in the stock store saw holders overlap.
func partialCheck(l *oracle.Ledger, parts []results.Part) oracle.Report {
	r := oracle.Check(l, nil)
	if f := parts[0].Final; f != nil && index(parts[0]) == 0 {
		r.FinalStock = f.Stock
		r.NegativeStock = !f.StockGone && f.Stock < 0
		if r.Witness = f.Witness; f.Witness != nil {
			r.Overlaps = int(f.Witness.Overlaps)
		}
	}
	return r
}

// saleDiff names the first setting two shards' sales differ in.
func saleDiff(a, b results.Run) string {
	switch {
	case a.Impl != b.Impl:
		return fmt.Sprintf("design %s, not %s", b.Impl, a.Impl)
	case a.Scenario != b.Scenario:
		return fmt.Sprintf("scenario %s, not %s", b.Scenario, a.Scenario)
	case a.Params.Seed != b.Params.Seed:
		return fmt.Sprintf("seed %d, not %d", b.Params.Seed, a.Params.Seed)
	case a.Params.Buyers != b.Params.Buyers:
		return fmt.Sprintf("%d buyers, not %d", b.Params.Buyers, a.Params.Buyers)
	case a.Params.Stock != b.Params.Stock:
		return fmt.Sprintf("stock %d, not %d", b.Params.Stock, a.Params.Stock)
	}
	return "other settings"
}

// join is the sale's ledger: every shard's entries back at their buyers' numbers (a lost
// shard's left pending). A shard's unstarted buyers, its last, are marked interrupted,
// since in the union they are not the last.
func join(parts []results.Part) *oracle.Ledger {
	first := &parts[0].Run
	n := first.Shard.Count
	l := oracle.NewLedger(first.Params.Buyers, first.Params.Stock)
	l.Hosts = n
	for _, p := range parts {
		s := Shard{Index: p.Run.Shard.Index, Count: n}
		for k, e := range p.Entries {
			if k >= len(p.Entries)-p.Unstarted {
				e.Outcome = oracle.Interrupted
			}
			l.Entries[s.Global(k)] = e
		}
	}
	return l
}

// addLatencies adds the shards' histograms of each phase.
func addLatencies(parts []results.Part) (map[string]results.Latency, error) {
	sums := map[string]*hdrhistogram.Histogram{}
	for _, p := range parts {
		for phase, l := range p.Run.Latency {
			h, err := l.Histogram()
			if err != nil {
				return nil, fmt.Errorf("merge: %s: %s latency: %w", p.Run.Source, phase, err)
			}
			if sum, ok := sums[phase]; ok {
				sum.Merge(h)
			} else {
				sums[phase] = h
			}
		}
	}
	out := make(map[string]results.Latency, len(sums))
	for phase, h := range sums {
		l, err := results.Summarize(h)
		if err != nil {
			return nil, err
		}
		out[phase] = l
	}
	return out, nil
}

// unfiredAll is the faults that struck in no shard.
func unfiredAll(parts []results.Part) []string {
	var out []string
	for _, k := range parts[0].Run.NotExercised {
		if !slices.ContainsFunc(parts, func(p results.Part) bool { return !slices.Contains(p.Run.NotExercised, k) }) {
			out = append(out, k)
		}
	}
	return out
}
