package scenarios

import (
	"time"

	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// record turns a finished sale into its result record; unfired are the plan's faults
// that never struck.
func (s FlashSale) record(impl lockimpl.Impl, started time.Time, r oracle.Report, sl *sale, unfired []string) results.Run {
	rec := sl.rec
	if impl.Retry != nil {
		s.Retry = impl.Retry(s.Retry)
	}
	run := results.Run{
		Kind: "lock", Scenario: s.Name, Impl: impl.Name, Complete: true,
		Started: started, Duration: time.Since(started), Oracle: r,
		Latency: make(map[string]results.Latency),
		Params: results.Params{
			Buyers: s.Buyers, Stock: s.Stock, Critical: string(s.Critical), Think: s.Think.String(),
			TTL: s.TTL.String(), RetryInterval: s.Retry.Interval.String(), RetryTimeout: s.Retry.Timeout.String(), RetryJitter: s.Retry.Jitter,
			Conns: s.Conns, Seed: s.Seed, Faults: s.Faults.String(), Rate: s.Rate, RampTo: s.RampTo,
		},
	}
	if s.Warmup > 0 {
		run.Params.Warmup = s.Warmup.String()
	}
	if impl.NewPurchaser != nil {
		run.Params.Critical, run.Params.Think = "lua-script", "-"
	}
	var want []oracle.Class
	if name, ok := s.Faults.Documented(); ok {
		want = impl.Expect[name]
	}
	run.Judge(r.Verdict(), r.Class(), r.Cell(), r.Findings(), unfired, want)
	if r.LastSale > 0 {
		run.SalesPerSec = float64(r.Bought) / r.LastSale.Seconds()
	}
	var sold []time.Duration
	entries := sl.ledger.Started()
	tries := make([]int32, len(entries))
	for i, e := range entries {
		if e.Outcome == oracle.Bought {
			sold = append(sold, e.Done)
		}
		tries[i] = e.Tries
	}
	run.Sales = results.Timeline(sold)
	run.Tries = results.NewTries(tries)
	for _, p := range []results.Phase{results.Acquire, results.Critical, results.Release, results.Purchase} {
		if l, err := results.Summarize(rec.Histogram(p)); err == nil && l.Count > 0 {
			run.Latency[p.String()] = l
		}
	}
	return run
}
