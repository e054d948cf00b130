package queueimpl

// The built-in designs, in the order list and matrix show them. What each earns under
// each fault is documented beside the sale that judges it (package scenarios).
func init() {
	Register(Impl{
		Name:      "seed-zset",
		Summary:   "ZADD; take under the seed SETNX lock with ZRANGE + ZREM, ZREM unchecked",
		Guarantee: "none: the seed lock's steal race hands one task to two workers",
		Ordered:   true,
		New:       func(e Env) Queue { return SeedZSet{Client: e.Client, Keys: e.Keys, LockTTL: e.Visibility} },
	})
	Register(Impl{
		Name:      "zpopmin",
		Summary:   "ZADD score=seq; BZPOPMIN",
		Guarantee: "at most once, lowest seq first",
		Ordered:   true,
		New:       func(e Env) Queue { return ZPopMin{Client: e.Client, Keys: e.Keys} },
	})
	Register(Impl{
		Name:      "list",
		Summary:   "LPUSH; BRPOP",
		Guarantee: "at most once, first in first out",
		New:       func(e Env) Queue { return List{Client: e.Client, Keys: e.Keys} },
	})
	Register(Impl{
		Name:      "reliable-list",
		Summary:   "LPUSH; BLMOVE to a processing list; ack LREM; a reaper re-queues tasks held past the visibility timeout",
		Guarantee: "at least once",
		New:       func(e Env) Queue { return ReliableList{Client: e.Client, Keys: e.Keys, Visibility: e.Visibility} },
	})
	Register(Impl{
		Name:      "stream",
		Summary:   "XADD; XREADGROUP in one group; XACK; XAUTOCLAIM of entries idle past the visibility timeout",
		Guarantee: "at least once, arrival order for first deliveries",
		Ordered:   true,
		New:       func(e Env) Queue { return Stream{Client: e.Client, Keys: e.Keys, Visibility: e.Visibility} },
	})
}
