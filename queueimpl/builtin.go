package queueimpl

import (
	"github.com/stockbench/stockbench/oracle"
)

var (
	safe       = []oracle.Class{oracle.ClassSafe}
	lost       = []oracle.Class{oracle.ClassLost}
	duplicated = []oracle.Class{oracle.ClassDuplicated}
	// racy is a race's verdict: it fires in most runs, but not in all.
	racy = []oracle.Class{oracle.ClassDuplicated, oracle.ClassSafe}
)

// both expects want under either fulfil.
func both(want []oracle.Class) [2][]oracle.Class { return [2][]oracle.Class{want, want} }

// atMostOnce is what a design that forgets a task once it is taken earns.
var atMostOnce = map[string][2][]oracle.Class{
	"none": both(safe), "worker-crash": both(lost), "worker-crash-late": both(safe),
	"worker-pause": both(safe), "redis-restart": both(lost),
}

// atLeastOnce is what a design that hands a silent worker's task on earns: no loss but to
// a server that forgets everything, and duplicates that only an idempotent fulfil absorbs.
var atLeastOnce = map[string][2][]oracle.Class{
	"none": both(safe), "worker-crash": both(safe), "worker-crash-late": {duplicated, safe},
	"worker-pause": {duplicated, safe}, "redis-restart": both(lost),
}

func init() {
	Register(Impl{
		Name:      "seed-zset",
		Summary:   "ZADD; take under the seed SETNX lock with ZRANGE + ZREM, ZREM unchecked",
		Guarantee: "none: the seed lock's steal race hands one task to two workers",
		Ordered:   true,
		// The steal race hands some tasks to two workers without any fault: a naive fulfil
		// applies them twice (14 to 16 of 200 in the runs seen). Under the worker faults
		// fewer workers race and it ranged from 0 to 15, so there SAFE is admitted too. A
		// worker that dies with a task loses it, as with any at-most-once design.
		Expect: map[string][2][]oracle.Class{
			"none": {duplicated, safe}, "worker-crash": both(lost), "worker-crash-late": {racy, safe},
			"worker-pause": {racy, safe}, "redis-restart": both(lost),
		},
		New: func(e Env) Queue { return SeedZSet{Client: e.Client, Keys: e.Keys, LockTTL: e.Visibility} },
	})
	Register(Impl{
		Name:      "zpopmin",
		Summary:   "ZADD score=seq; BZPOPMIN",
		Guarantee: "at most once, lowest seq first",
		Ordered:   true,
		Expect:    atMostOnce,
		New:       func(e Env) Queue { return ZPopMin{Client: e.Client, Keys: e.Keys} },
	})
	Register(Impl{
		Name:      "list",
		Summary:   "LPUSH; BRPOP",
		Guarantee: "at most once, first in first out",
		Expect:    atMostOnce,
		New:       func(e Env) Queue { return List{Client: e.Client, Keys: e.Keys} },
	})
	Register(Impl{
		Name:      "reliable-list",
		Summary:   "LPUSH; BLMOVE to a processing list; ack LREM; a reaper re-queues tasks held past the visibility timeout",
		Guarantee: "at least once",
		Expect:    atLeastOnce,
		New:       func(e Env) Queue { return ReliableList{Client: e.Client, Keys: e.Keys, Visibility: e.Visibility} },
	})
	Register(Impl{
		Name:      "stream",
		Summary:   "XADD; XREADGROUP in one group; XACK; XAUTOCLAIM of entries idle past the visibility timeout",
		Guarantee: "at least once, arrival order for first deliveries",
		Ordered:   true,
		Expect:    atLeastOnce,
		New:       func(e Env) Queue { return Stream{Client: e.Client, Keys: e.Keys, Visibility: e.Visibility} },
	})
}
