package scenarios

import (
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// record turns a finished queue sale into its result record; final is nil when Redis
// could not be read, and unfired are the plan's faults that never struck. The lock-sale
// figures the table shows (sold, final stock, sales/s) are filled from the queue's.
func (s QueueSale) record(impl queueimpl.Impl, started time.Time, qs *queueRun, final *oracle.QueueFinal, unfired []string) results.Run {
	q := oracle.CheckQueue(qs.ledger, final, impl.Ordered)
	run := results.Run{
		Kind: "queue", Scenario: s.Name, Impl: impl.Name, Complete: true,
		Started: started, Duration: time.Since(started),
		Queue: &q, Backlog: qs.backlog,
		Oracle: oracle.Report{Buyers: s.Buyers, Bought: q.Fulfilled, InitialStock: s.Stock,
			FinalStock: q.FinalStock, FinalUnknown: q.FinalUnknown},
		Latency: make(map[string]results.Latency),
		Params: results.Params{
			Buyers: s.Buyers, Stock: s.Stock, Critical: "queue", Think: s.Work.String(), Conns: s.Conns,
			Seed: s.Seed, Faults: s.Faults.String(), Workers: s.Workers, Fulfil: string(s.Fulfil),
			Visibility: s.Visibility.String(), Rate: s.Rate,
		},
	}
	fulfil := 0
	if s.Fulfil == Idempotent {
		fulfil = 1
	}
	var want []oracle.Class
	if name, ok := s.Faults.Documented(); ok {
		want = impl.Expect[name][fulfil]
	}
	run.Judge(q.Verdict(), q.Class(), q.Cell(), q.Findings(), unfired, want)
	var last time.Duration
	var sold []time.Duration
	for _, t := range qs.ledger.Takes {
		if t.Result == oracle.TakeFulfilled {
			last = max(last, t.Fulfilled)
			sold = append(sold, t.Fulfilled)
		}
	}
	run.Sales = results.Timeline(sold)
	if last > 0 {
		run.SalesPerSec = float64(q.Fulfilled) / last.Seconds()
	}
	if l, err := results.Summarize(qs.rec.Histogram(results.Queue)); err == nil && l.Count > 0 {
		run.Latency[results.Queue.String()] = l
	}
	return run
}
