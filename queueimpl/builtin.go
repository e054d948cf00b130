package queueimpl

import (
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// The built-in designs, in the order list and matrix show them, each with what it
// documents it earns (scenarios' tests assert every one on a real Redis).
var builtins = []Impl{
	{
		Name:      "seed-zset",
		Summary:   "ZADD; take under the seed SETNX lock with ZRANGE + ZREM, ZREM unchecked",
		Guarantee: "none: the seed lock's steal race hands one task to two workers",
		Ordered:   true,
		// The steal race hands some tasks to two workers without any fault: a naive
		// fulfil applies them twice (14 to 16 of 200 in the runs seen). Under the worker
		// faults fewer workers race and it ranged from 0 to 15, so there SAFE is admitted
		// too. A worker that dies with a task loses it, as with any at-most-once design,
		// unless the race had handed that task to another worker as well: then nothing is
		// lost (1 CI run in 6).
		// A deploy's SIGTERM strikes no process here, but the race still duplicates.
		Documented: Verdicts{
			Naive: AtMostOnce.Naive.WithNone(duplicated).With(racy, faults.WorkerCrashLate, faults.WorkerPause).
				With([]oracle.Class{oracle.ClassLost, oracle.ClassDuplicated, oracle.ClassSafe}, faults.WorkerCrash, faults.Reclaimers).
				With([]oracle.Class{oracle.ClassDuplicated, oracle.ClassNotExercised}, faults.WorkerTerm, faults.StepTerm, faults.EvictLease, faults.EvictJob, faults.ConsumerChurn),
			Idempotent: AtMostOnce.Idempotent.With([]oracle.Class{oracle.ClassLost, oracle.ClassSafe}, faults.WorkerCrash, faults.Reclaimers),
		},
		New: func(e Env) Queue { return SeedZSet{Client: e.Client, Keys: e.Keys, LockTTL: e.Visibility} },
	},
	{
		Name:       "zpopmin",
		Summary:    "ZADD score=seq; BZPOPMIN",
		Guarantee:  "at most once, lowest seq first",
		Ordered:    true,
		Documented: AtMostOnce,
		New:        func(e Env) Queue { return ZPopMin{Client: e.Client, Keys: e.Keys} },
	},
	{
		Name:       "list",
		Summary:    "LPUSH; BRPOP",
		Guarantee:  "at most once, first in first out",
		Documented: AtMostOnce,
		New:        func(e Env) Queue { return List{Client: e.Client, Keys: e.Keys} },
	},
	{
		Name:      "reliable-list",
		Summary:   "LPUSH; BLMOVE to a processing list; ack LREM; a reaper re-queues tasks held past the visibility timeout",
		Guarantee: "at least once",
		// Its reaper reads what is overdue, then moves each entry in a script of its own:
		// reapers in step (reclaimers) each move an entry that one of them handed back
		// and a live worker took at once, so a task goes to two live workers (in 11 of
		// 12 sales seen; the scripts' reaper, one script, never).
		// Its reaper gives a task whose time is missing one, so a dead worker's task
		// whose time was evicted (evict-lease) comes back a visibility timeout later.
		Documented: Verdicts{
			Naive:      AtLeastOnce.Naive.With(racy, faults.Reclaimers).With(safe, faults.EvictLease),
			Idempotent: AtLeastOnce.Idempotent.With(safe, faults.EvictLease),
		},
		New: func(e Env) Queue { return ReliableList{Client: e.Client, Keys: e.Keys, Visibility: e.Visibility} },
	},
	{
		Name:      "stream",
		Summary:   "XADD; XREADGROUP in one group; XACK; XAUTOCLAIM of entries idle past the visibility timeout",
		Guarantee: "at least once, arrival order for first deliveries",
		Ordered:   true,
		// A consumer deleted from the group takes its pending entries with it: a dead
		// worker's entry, which XAUTOCLAIM would have given another, is gone
		// (consumer-churn). A cleanup of gone consumers must claim their entries first.
		Documented: AtLeastOnce.With(lost, faults.ConsumerChurn),
		New:        func(e Env) Queue { return Stream{Client: e.Client, Keys: e.Keys, Visibility: e.Visibility} },
	},
}

func init() {
	for _, impl := range builtins {
		Register(impl)
	}
}
