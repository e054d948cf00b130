package queueimpl

import (
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// Verdicts is what a queue design documents it earns with each way a worker may
// fulfil an order, since the same design behaves differently with each.
type Verdicts struct {
	// Naive: the fulfil applies an order every time it is delivered.
	Naive faults.Verdicts
	// Idempotent: the fulfil applies each order once, however often it is delivered.
	Idempotent faults.Verdicts
}

// For is what v documents with an idempotent fulfil or a naive one.
func (v Verdicts) For(idempotent bool) faults.Verdicts {
	if idempotent {
		return v.Idempotent
	}
	return v.Naive
}

// The classes the built-in designs document, as sets a verdict may fall in.
var (
	safe       = []oracle.Class{oracle.ClassSafe}
	lost       = []oracle.Class{oracle.ClassLost}
	duplicated = []oracle.Class{oracle.ClassDuplicated}
	// racy is a queue race's verdict: it fires in most runs, but not in all.
	racy = []oracle.Class{oracle.ClassDuplicated, oracle.ClassSafe}
	// notExercised: the design has no part the fault acts on, so it never strikes.
	notExercised = []oracle.Class{oracle.ClassNotExercised}
)

// everywhere is want with no fault and under every queue fault but worker-term,
// step-term, the evictions and consumer-churn: a deploy's SIGTERM reaches a worker with a
// process of its own (an adapter's, which for step-term reports its library's steps),
// and every built-in design's workers are goroutines of the harness; an eviction strikes
// only a design that keeps keys of its class (Classed), consumer-churn only one whose
// workers are consumers of a group (Churner), which say what they earn there.
func everywhere(want []oracle.Class) faults.Verdicts {
	return faults.Everywhere(faults.Queues, want).With(notExercised, faults.WorkerTerm, faults.StepTerm, faults.EvictLease, faults.EvictJob, faults.ConsumerChurn)
}

// With returns v with want under the faults named, with either fulfil.
func (v Verdicts) With(want []oracle.Class, kinds ...faults.Kind) Verdicts {
	return Verdicts{Naive: v.Naive.With(want, kinds...), Idempotent: v.Idempotent.With(want, kinds...)}
}

// both is v with either fulfil.
func both(v faults.Verdicts) Verdicts { return Verdicts{Naive: v, Idempotent: v} }

// AtMostOnce is what a design that forgets a task once it is taken earns: it loses what
// a dying worker held (reclaimers' victim dies too), and everything to a server that
// forgets everything.
var AtMostOnce = both(everywhere(safe).With(lost, faults.WorkerCrash, faults.Reclaimers, faults.RedisRestart))

// AtLeastOnce is what a design that hands a silent worker's task on earns: no loss but
// to a server that forgets everything, and duplicates that only an idempotent fulfil
// absorbs.
var AtLeastOnce = Verdicts{
	Naive:      everywhere(safe).With(lost, faults.RedisRestart).With(duplicated, faults.WorkerCrashLate, faults.WorkerPause),
	Idempotent: everywhere(safe).With(lost, faults.RedisRestart),
}
