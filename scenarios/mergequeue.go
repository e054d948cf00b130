package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// mergeQueue joins the parts of a sharded queue sale: every shard's orders back at their
// buyers' numbers, every worker's takes (a shard's workers take any shard's orders), the
// oracles run on the union with what the first shard read of Redis once all were done,
// so an order lost, applied twice or handed out of order across shards is found as in
// one process. With shards lost, their orders are unknown: the final state is not
// compared, and the verdict is UNKNOWN unless the takes that are left show damage.
func mergeQueue(parts []results.Part, lost []int) (results.Run, error) {
	first := &parts[0].Run
	impl, err := queueimpl.Lookup(first.Impl)
	if err != nil {
		return results.Run{}, fmt.Errorf("merge: %s: %w (a sharded queue sale runs the built-in designs)", first.Source, err)
	}
	plan, err := faults.Parse(first.FaultPlan())
	if err != nil {
		return results.Run{}, fmt.Errorf("merge: %s: %w", first.Source, err)
	}
	n := first.Shard.Count
	l := &oracle.QueueLedger{Orders: make([]oracle.Enqueued, first.Params.Buyers)}
	for i := range l.Orders {
		l.Orders[i].ID = strconv.Itoa(i)
	}
	for _, p := range parts {
		q := p.Queue
		if q == nil {
			return results.Run{}, fmt.Errorf("merge: %s holds no queue ledger (queue-ledger.json)", p.Run.Source)
		}
		l.InitialStock, l.Lease = q.InitialStock, q.Lease
		// Every shard's times count from the sale's one start (queueRun.run).
		s := Shard{Index: p.Run.Shard.Index, Count: n}
		for k, o := range q.Orders {
			l.Orders[s.Global(k)] = o
		}
		l.Takes = append(l.Takes, q.Takes...)
		l.DoubtfulTakes = append(l.DoubtfulTakes, q.DoubtfulTakes...)
	}
	slices.SortStableFunc(l.Takes, func(a, b oracle.Take) int { return cmp.Compare(a.Begin, b.Begin) })
	final := parts[0].QueueFinal
	if len(lost) > 0 || len(first.Shard.Lost) > 0 || index(parts[0]) != 0 {
		final = nil
	}
	run := results.Run{
		Scenario: first.Scenario, Params: first.Params, Complete: true, Backlog: first.Backlog,
		Shard: &results.ShardInfo{Count: n, Merged: true, Attempt: first.Shard.Attempt},
	}
	gather(&run, parts, lost)
	if run.Latency, err = addLatencies(parts); err != nil {
		return results.Run{}, err
	}
	delete(run.Latency, results.Recovery.String()) // judgeQueue reads it off the union
	judgeQueue(&run, l, final, impl, impl.Documented.For(first.Params.Fulfil == string(Idempotent)), plan, unfiredAll(parts))
	if c := first.Commands; c != nil { // the first shard counted every shard's commands
		merged := *c
		merged.PerSale, merged.CPUPerSaleUs = 0, 0
		if f := run.Queue.Fulfilled; f > 0 {
			merged.PerSale = float64(c.Total) / float64(f)
			merged.CPUPerSaleUs = float64(c.CPUUs) / float64(f)
		}
		run.Commands = &merged
	}
	run.DamageRate = run.NewRate()
	return run, nil
}
