package lockimpl

import (
	"slices"
	"time"

	"github.com/bsm/redislock"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// The built-in designs, in the order list and matrix show them, each with what it
// documents it earns (scenarios' tests assert every one on a real Redis).
var builtins = []Impl{
	{
		Name:    "none",
		Summary: "no lock at all: the negative control that proves the checks find an oversell",
		// No lock: lost updates for sure. Whether they oversell depends on how many buyers
		// read the same stock before it runs out: alone, always; beside other sales under a
		// fault that slows the server (evict's writer shares it), the buyers run closer to
		// one at a time, and once lost 9 updates among 30 sales (LOST, not OVERSOLD).
		// A fault that does not strike (term-holder) leaves the no-fault damage.
		Documented: everywhere([]oracle.Class{oracle.ClassOversold, oracle.ClassLost}).WithNone(oversold).
			With([]oracle.Class{oracle.ClassOversold, oracle.ClassLost}, faults.TermHolder, faults.AppPause),
		// A holder that dies leaves no lock to wait out, and the stall's meeting stays.
		DropDocumented: drop(dropRace, dropRace, oversold, oversold),
		NewLocker:      func(Env) Locker { return None{} },
	},
	{
		Name:    "seed-setnx",
		Summary: "classic PHP port: SETNX; EXPIRE with a timestamp; SET steals when TTL<0; DEL",
		Seconds: true,
		// The steal race oversells with no fault at all. A holder that dies leaves its
		// 56-year lock, which nobody steals (its TTL is not negative): the sale stops there,
		// oversold or not by then. A buyer that dies between SETNX and EXPIRE leaves a lock
		// with no TTL, which every poller then steals at once: two holders for sure, but
		// the dying buyer has to win the lock first, and under the matrix's side-by-side
		// load it sometimes wins it only after the stock is gone, when the thieves read 0
		// and write nothing (OVERLAP 20 in one fresh clone's make bench; OVERSOLD in 12
		// runs alone). So what the design guarantees there is the family of a second
		// holder. The thieves steal from each other inside their leases: a broken lock.
		Documented: everywhere(stealRace).With([]oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassStuck}, faults.CrashHolder).
			With(append(slices.Clone(secondHolder), oracle.ClassBroken), faults.CrashAcquire).
			With(stealRace, faults.TermHolder, faults.AppPause), // not struck: the race with no fault
		// Its 56-year lock outlives a dead or paused holder; before the holder dies, the
		// stall's meeting may already have come (LOCK-BROKEN beside other tests' load).
		DropDocumented: drop(dropRace, append(slices.Clone(dropRace), oracle.ClassStuck), dropRace, oversold),
		NewLocker:      func(e Env) Locker { return SeedSetNX{e.Locks[0]} },
	},
	{
		Name:           "setnx-expire",
		Summary:        "SETNX then EXPIRE ttl (two round trips); DEL",
		Seconds:        true,
		Documented:     ttlLock.With(stuck, faults.CrashAcquire),
		DropDocumented: dropTTL,
		NewLocker:      func(e Env) Locker { return SetNXExpire{e.Locks[0]} },
	},
	{
		Name:           "set-nx-ex",
		Summary:        "SET key 1 NX EX ttl; DEL",
		Seconds:        true,
		Documented:     ttlLock,
		DropDocumented: dropTTL,
		NewLocker:      func(e Env) Locker { return SetNXEX{e.Locks[0]} },
	},
	{
		Name:           "token",
		OwnerRelease:   true,
		Summary:        "SET key token NX PX ttl; Lua compare-and-delete",
		Documented:     ttlLock,
		DropDocumented: dropTTL,
		NewLocker:      func(e Env) Locker { return Token{e.Locks[0]} },
	},
	{
		Name:         "token-wait",
		OwnerRelease: true,
		Summary:      "token, then WAIT 1 500ms: held only once a replica has it, else given back",
		// A restart empties the replica too, but it resyncs only after a retry, and the
		// restarted master, on Redis's default settings, waits repl-diskless-sync-delay
		// (5 s) for more replicas before it syncs: until then WAIT refuses every lock,
		// which may or may not outlast the victim, and may outlast the buyers' patience
		// (STUCK). The simulated failover detaches the replica as the sale starts, so no
		// lock is acknowledged after that: the buyers give up (STUCK), and unless five
		// locks got in first the fault's victim never comes (NOT-EXERCISED).
		Documented: ttlLock.With([]oracle.Class{oracle.ClassSafe, oracle.ClassOversold, oracle.ClassStuck}, faults.RedisRestart, faults.RollingRestart).
			With([]oracle.Class{oracle.ClassStuck, oracle.ClassNotExercised}, faults.Failover),
		Replicas: 1,
		// No lock is acknowledged after the detach: no wave fires.
		DropDocumented: drop(safe, safe, oversold, []oracle.Class{oracle.ClassStuck, oracle.ClassNotExercised}),
		NewLocker:      func(e Env) Locker { return TokenWait{Client: e.Locks[0]} },
	},
	{
		Name:         "token-watchdog",
		OwnerRelease: true, Renews: true,
		Summary: "token, renewed every ttl/3 while held (Redisson's watchdog)",
		// A server answering OOM to writes still takes PEXPIRE, which takes no memory:
		// the renewals go on (READONLY refuses them: server-errors:mode=readonly oversells).
		Documented: ttlLock.With(safe, faults.SlowWork, faults.CPUStarve, faults.ServerErrors),
		// A paused process pauses its watchdog.
		DropDocumented: dropTTL,
		NewLocker:      func(e Env) Locker { return TokenWatchdog{e.Locks[0]} },
	},
	{
		Name:         "fencing",
		OwnerRelease: true,
		Summary:      "token + INCR fencing token; the stock store refuses stale tokens",
		// A restart in turn of its one server comes back empty half a TTL after the
		// victim took the lock, and the next grant lands just before or just after the
		// victim's lease ends: LOCK-BROKEN or OVERLAP (CI saw LOCK-BROKEN 8 once).
		Documented:     everywhere(noOversell).With(fenced, faults.RedisRestart, faults.RollingRestart, faults.Failover, faults.Evict, faults.ClockJump),
		DropDocumented: drop(safe, safe, fenced, fenced),
		NewLocker:      func(e Env) Locker { return Fencing{e.Locks[0]} },
	},
	{
		Name:    "watch",
		Summary: "no lock: WATCH stock, read, think, MULTI SET+RPUSH EXEC, retry on conflict",
		// Slow work and a pause stretch a purchase's think, between its read and its
		// write: EXEC then fails if the stock moved, and the purchase tries again.
		Documented:   everywhere(safe).With(notExercised, faults.CrashAcquire, faults.CrashHolder),
		NewPurchaser: func(e Env) Purchaser { return Watch{Client: e.Stock, Retry: e.Retry} },
	},
	{
		Name:         "lua",
		Summary:      "no lock: check, DECR and record the order in one Lua script",
		Documented:   everywhere(safe).With(notExercised, faults.SlowWork, faults.CPUStarve, faults.ClientPause, faults.CrashAcquire, faults.CrashHolder),
		NewPurchaser: func(e Env) Purchaser { return Lua{e.Stock} },
	},
	{
		Name:         "redislock",
		OwnerRelease: true,
		Summary:      "bsm/redislock: SET NX PX token, compare-and-delete",
		// Under redis-pause the library's own acquire deadline cuts off SETs that Redis
		// runs on resuming: the lock is then held by nobody, for a TTL, which may or may
		// not cover the victim.
		Documented:     ttlLock.With(nil, faults.RedisPause),
		DropDocumented: dropTTL,
		NewLocker:      func(e Env) Locker { return Redislock{redislock.New(e.Locks[0])} },
	},
	{
		Name:         "redsync",
		OwnerRelease: true,
		Summary:      "go-redsync/redsync on one Redis",
		// As redislock's, under redis-pause.
		Documented:     ttlLock.With(nil, faults.RedisPause),
		DropDocumented: dropTTL,
		NewLocker:      func(e Env) Locker { return NewRedsync(e.Locks...) },
	},
	{
		Name:         "redlock",
		OwnerRelease: true,
		Summary:      "go-redsync/redsync Redlock over 5 independent Redis servers (majority of 3)",
		// Faults on one of the five servers let a second holder in only when the victim
		// held a bare majority, which depends on the race for the other servers; a pause
		// past the TTL outlives the lock on all five. Under more contention or latency
		// Redlock livelocks: everyone holds a minority and lets go. The faults on one
		// server (restart, failover, eviction, a clock jump: Kleppmann's case) and on the
		// network are therefore a race: SAFE and OVERSOLD were both seen under evict and
		// failover.
		Documented: everywhere(aRace).WithNone(safeOrStuck).
			With(safeOrStuck, faults.CrashAcquire, faults.CrashHolder).
			With(secondHolder, faults.SlowWork, faults.CPUStarve, faults.ClientPause, faults.RedisPause).
			// Three of the five restarted in turn, each after half a TTL, or one of them
			// answering errors: the victim, which does not renew, outlives its lease on
			// every server first.
			With(secondHolder, faults.RollingRestart, faults.ServerErrors).
			// The victim's application cut off from all five: its lease runs out on every
			// one while the other instances take the lock (OVERSOLD 10/10 seen).
			With(secondHolder, faults.AppBlackhole),
		Nodes: 5,
		// The Redlock algorithm retries after a random delay, so that contenders stop
		// splitting the servers between them; redsync's own is 50-250ms.
		Retry: func(r Retry) Retry {
			r.Interval, r.Jitter = max(r.Interval, 100*time.Millisecond), 1
			return r
		},
		DropDocumented: drop(safe, safeOrStuck, []oracle.Class{oracle.ClassOversold, oracle.ClassOverlap}, aRace),
		NewLocker:      func(e Env) Locker { return NewRedsync(e.Locks...) },
	},
}

func init() {
	for _, impl := range builtins {
		Register(impl)
	}
}
