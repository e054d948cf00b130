package lockimpl

import (
	"time"

	"github.com/bsm/redislock"

	"github.com/stockbench/stockbench/oracle"
)

// Expected classes, as sets a design's verdict may fall in.
var (
	safe       = []oracle.Class{oracle.ClassSafe}
	oversold   = []oracle.Class{oracle.ClassOversold}
	stuck      = []oracle.Class{oracle.ClassStuck}
	noOversell = []oracle.Class{oracle.ClassSafe, oracle.ClassOverlap, oracle.ClassStuck}
	// Redlock's: no second holder, though split votes may keep everyone out; or a
	// second holder, who may or may not get to write before the sale stalls.
	safeOrStuck  = []oracle.Class{oracle.ClassSafe, oracle.ClassStuck}
	secondHolder = []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassOverlap}
	// aRace is a verdict that a race decides: a second holder gets in, or nobody does.
	aRace = []oracle.Class{oracle.ClassSafe, oracle.ClassStuck, oracle.ClassOversold, oracle.ClassLost, oracle.ClassOverlap}
	// notExercised: the design has no part the fault acts on, so it never strikes.
	notExercised = []oracle.Class{oracle.ClassNotExercised}
)

// The fault names the expectations use; package faults defines what each one does.
var faultNames = []string{
	"none", "slow-work", "client-pause", "crash-acquire", "crash-holder",
	"redis-pause", "redis-restart", "failover", "net-latency", "net-timeout", "evict",
}

// everywhere expects want under every fault.
func everywhere(want []oracle.Class) map[string][]oracle.Class {
	m := make(map[string][]oracle.Class, len(faultNames))
	for _, f := range faultNames {
		m[f] = want
	}
	return m
}

// untouchedBy marks the faults that never strike the design: it has no lock to take or
// hold, or (for one script) no moment between reading the stock and writing it.
func untouchedBy(m map[string][]oracle.Class, faults ...string) map[string][]oracle.Class {
	for _, f := range faults {
		m[f] = notExercised
	}
	return m
}

// with returns m with fault's expectation replaced by want.
func with(m map[string][]oracle.Class, fault string, want []oracle.Class) map[string][]oracle.Class {
	m[fault] = want
	return m
}

// ttlLock is what a lock that relies on its TTL alone earns: safe while holders are alive
// and quick, an oversell whenever the lock is lost under a holder that then writes.
func ttlLock(over map[string][]oracle.Class) map[string][]oracle.Class {
	m := map[string][]oracle.Class{
		"none": safe, "slow-work": oversold, "client-pause": oversold,
		"crash-acquire": safe, "crash-holder": safe, "net-latency": safe,
		"redis-pause": oversold, "redis-restart": oversold, "failover": oversold, "net-timeout": oversold, "evict": oversold,
	}
	for k, v := range over {
		if v == nil {
			delete(m, k) // not asserted
		} else {
			m[k] = v
		}
	}
	return m
}

func init() {
	Register(Impl{
		Name:      "none",
		Summary:   "no lock at all: the negative control that proves the checks find an oversell",
		Expect:    everywhere(oversold),
		NewLocker: func(Env) Locker { return None{} },
	})
	Register(Impl{
		Name:    "seed-setnx",
		Summary: "classic PHP port: SETNX; EXPIRE with a timestamp; SET steals when TTL<0; DEL",
		// The steal race oversells with no fault at all. A holder that dies leaves its
		// 56-year lock, which nobody steals (its TTL is not negative): the sale stops
		// there, oversold or not by then.
		Expect:    with(everywhere(oversold), "crash-holder", []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassStuck}),
		NewLocker: func(e Env) Locker { return SeedSetNX{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "setnx-expire",
		Summary:   "SETNX then EXPIRE ttl (two round trips); DEL",
		Expect:    ttlLock(map[string][]oracle.Class{"crash-acquire": stuck}),
		NewLocker: func(e Env) Locker { return SetNXExpire{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "set-nx-ex",
		Summary:   "SET key 1 NX EX ttl; DEL",
		Expect:    ttlLock(nil),
		NewLocker: func(e Env) Locker { return SetNXEX{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "token",
		Summary:   "SET key token NX PX ttl; Lua compare-and-delete",
		Expect:    ttlLock(nil),
		NewLocker: func(e Env) Locker { return Token{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "token-watchdog",
		Summary:   "token, renewed every ttl/3 while held (Redisson's watchdog)",
		Expect:    ttlLock(map[string][]oracle.Class{"slow-work": safe}),
		NewLocker: func(e Env) Locker { return TokenWatchdog{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "fencing",
		Summary:   "token + INCR fencing token; the stock store refuses stale tokens",
		Expect:    everywhere(noOversell),
		NewLocker: func(e Env) Locker { return Fencing{e.Locks[0]} },
	})
	Register(Impl{
		Name:    "watch",
		Summary: "no lock: WATCH stock, read, think, MULTI SET+RPUSH EXEC, retry on conflict",
		// Slow work and a pause stretch a purchase's think, between its read and its
		// write: EXEC then fails if the stock moved, and the purchase tries again.
		Expect:       untouchedBy(everywhere(safe), "crash-acquire", "crash-holder"),
		NewPurchaser: func(e Env) Purchaser { return Watch{Client: e.Stock, Retry: e.Retry} },
	})
	Register(Impl{
		Name:         "lua",
		Summary:      "no lock: check, DECR and record the order in one Lua script",
		Expect:       untouchedBy(everywhere(safe), "slow-work", "client-pause", "crash-acquire", "crash-holder"),
		NewPurchaser: func(e Env) Purchaser { return Lua{e.Stock} },
	})
	Register(Impl{
		Name:    "redislock",
		Summary: "bsm/redislock: SET NX PX token, compare-and-delete",
		// Under redis-pause the library's own acquire deadline cuts off SETs that Redis runs
		// on resuming: the lock is then held by nobody, for a TTL, which may or may not
		// cover the victim.
		Expect:    ttlLock(map[string][]oracle.Class{"redis-pause": nil}),
		NewLocker: func(e Env) Locker { return Redislock{redislock.New(e.Locks[0])} },
	})
	Register(Impl{
		Name:      "redsync",
		Summary:   "go-redsync/redsync on one Redis",
		Expect:    ttlLock(map[string][]oracle.Class{"redis-pause": nil}), // as redislock
		NewLocker: func(e Env) Locker { return NewRedsync(e.Locks...) },
	})
	Register(Impl{
		Name:    "redlock",
		Summary: "go-redsync/redsync Redlock over 5 independent Redis servers (majority of 3)",
		Nodes:   5,
		// Faults on one of the five servers let a second holder in only when the victim
		// held a bare majority, which depends on the race for the other servers; a pause
		// past the TTL outlives the lock on all five. Under more contention or latency
		// Redlock livelocks: everyone holds a minority and lets go. The faults on one
		// server (restart, failover, eviction) and on the network are therefore a race:
		// SAFE and OVERSOLD were both seen under evict and failover.
		Expect: map[string][]oracle.Class{
			"none": safeOrStuck, "slow-work": secondHolder, "client-pause": secondHolder,
			"crash-acquire": safeOrStuck, "crash-holder": safeOrStuck, "redis-pause": secondHolder,
			"redis-restart": aRace, "failover": aRace, "net-latency": aRace, "net-timeout": aRace, "evict": aRace,
		},
		// The Redlock algorithm retries after a random delay, so that contenders stop
		// splitting the servers between them; redsync's own is 50-250ms.
		Retry: func(r Retry) Retry {
			r.Interval, r.Jitter = max(r.Interval, 100*time.Millisecond), 1
			return r
		},
		NewLocker: func(e Env) Locker { return NewRedsync(e.Locks...) },
	})
}
