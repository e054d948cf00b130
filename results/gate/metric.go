package gate

import (
	"math"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// Metric names a figure of a run that a threshold reads.
type Metric string

// The metrics, each described once in metrics.
const (
	Oversold    Metric = "oversold"
	Lost        Metric = "lost"
	Duplicated  Metric = "duplicated"
	Reordered   Metric = "reordered"
	Overlaps    Metric = "overlaps"
	BrokenLocks Metric = "broken_locks"
	Stuck       Metric = "stuck"
	GaveUp      Metric = "gave_up"
	Errors      Metric = "errors"
	Sold        Metric = "sold"
	SalesPerSec Metric = "sales_per_sec"
	P50         Metric = "p50"
	P90         Metric = "p90"
	P99         Metric = "p99"
	P999        Metric = "p999"
	Max         Metric = "max"
)

// measure is how a metric is read from a run: ok is false where the run's kind of sale
// has no such figure (overlaps of a queue sale), and the threshold is then not applied.
type measure struct {
	name Metric
	// what says what it counts, for errors and the README.
	what string
	// latency: the figure is a duration, compared in milliseconds.
	latency bool
	// safety: the figure needs the final state (UNKNOWN when it could not be read).
	safety bool
	read   func(r *results.Run) (v float64, ok bool)
}

var measures = []measure{
	{Oversold, "units sold beyond the stock", false, true, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return float64(r.Queue.Oversold), true
		}
		return float64(r.Oracle.Oversold), true
	}},
	{Lost, "lost updates (locks), or accepted orders never fulfilled nor refused (queues)", false, true, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return float64(r.Queue.Lost), true
		}
		return math.Abs(float64(r.Oracle.LostUpdates)), true
	}},
	{Duplicated, "an order's effect applied more than once (queues)", false, true, func(r *results.Run) (float64, bool) {
		if r.Queue == nil {
			return 0, false
		}
		return float64(r.Queue.DuplicatedEffects), true
	}},
	{Reordered, "tasks handed out of order, where the design promises an order (queues)", false, false, func(r *results.Run) (float64, bool) {
		if r.Queue == nil {
			return 0, false
		}
		return float64(r.Queue.OutOfOrder), true
	}},
	{Overlaps, "holders that held the lock at once (locks)", false, false, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return 0, false
		}
		return float64(r.Oracle.Overlaps), true
	}},
	{BrokenLocks, "overlaps while both holders were surely inside their leases: the lock broke its promise (locks)", false, false, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return 0, false
		}
		return float64(r.Oracle.LockBroken), true
	}},
	{Stuck, "1 when a lock was left held for good, or alive after its last holder released it (locks)", false, true, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return 0, false
		}
		return b2f(r.Oracle.Stuck || r.Oracle.Zombie), true
	}},
	{GaveUp, "buyers who gave up while stock remained (locks)", false, false, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return 0, false
		}
		return float64(r.Oracle.GaveUpWithStock), true
	}},
	{Errors, "Redis errors the buyers and workers met", false, false, func(r *results.Run) (float64, bool) { return float64(r.Errors), true }},
	{Sold, "units sold (orders fulfilled)", false, true, func(r *results.Run) (float64, bool) {
		if r.Queue != nil {
			return float64(r.Queue.Fulfilled), true
		}
		return float64(r.Oracle.Bought), true
	}},
	{SalesPerSec, "confirmed orders a second", false, false, func(r *results.Run) (float64, bool) { return r.SalesPerSec, true }},
	{P50, "median latency of a purchase (queues: an order's arrival to its fulfilment)", true, false, quantile(func(l results.Latency) int64 { return l.P50Us })},
	{P90, "90th percentile of the same", true, false, quantile(func(l results.Latency) int64 { return l.P90Us })},
	{P99, "99th percentile of the same", true, false, quantile(func(l results.Latency) int64 { return l.P99Us })},
	{P999, "99.9th percentile of the same", true, false, quantile(func(l results.Latency) int64 { return l.P999Us })},
	{Max, "the slowest of the same", true, false, quantile(func(l results.Latency) int64 { return l.MaxUs })},
}

// rates are the metrics read as a rate over a sale's draws (--runs): the share of its
// draws, 0 to 1, that earned the metric's class or showed its kind of finding; for a
// sale run once, 1 when its figure is above zero, else 0. "broken_locks_rate <= 0"
// holds when no draw broke the lock; "oversold_rate < 0.05" admits a race in one
// draw of twenty.
var rates = []struct {
	of    Metric
	names []string // classes and kinds of finding (results.Draw.Has)
}{
	{Oversold, []string{"OVERSOLD"}},
	{Lost, []string{"LOST"}},
	{Duplicated, []string{"DUPLICATED"}},
	{Reordered, []string{"REORDERED"}},
	{Overlaps, []string{"OVERLAP", "LOCK-BROKEN"}},
	{BrokenLocks, []string{"LOCK-BROKEN"}},
	{Stuck, []string{"STUCK", "ZOMBIE-LOCK"}},
}

func init() {
	for _, rt := range rates {
		base, _ := lookupMetric(string(rt.of))
		measures = append(measures, measure{name: rt.of + "_rate",
			what:   "share of the sale's draws (--runs) with " + string(rt.of) + ", 0 to 1",
			safety: base.safety,
			read: func(r *results.Run) (float64, bool) {
				if r.Draws != nil && r.Draws.Runs > 0 {
					v, _ := r.Draws.Share(rt.names...)
					return v, true
				}
				v, ok := base.read(r)
				return b2f(v > 0), ok
			}})
	}
}

// quantile reads a figure of the main latency in milliseconds; none without samples.
func quantile(q func(results.Latency) int64) func(r *results.Run) (float64, bool) {
	return func(r *results.Run) (float64, bool) {
		_, l := r.MainLatency()
		return float64(q(l)) / 1000, l.Count > 0
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func lookupMetric(name string) (measure, bool) {
	i := slices.IndexFunc(measures, func(m measure) bool { return string(m.name) == name })
	if i < 0 {
		return measure{}, false
	}
	return measures[i], true
}

func metricNames() string {
	names := make([]string, len(measures))
	for i, m := range measures {
		names[i] = string(m.name)
	}
	return strings.Join(names, ", ")
}
