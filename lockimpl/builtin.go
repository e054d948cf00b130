package lockimpl

import (
	"time"

	"github.com/bsm/redislock"
)

// The built-in designs, in the order list and matrix show them. What each earns under
// each fault is documented beside the sale that judges it (package scenarios).
func init() {
	Register(Impl{
		Name:      "none",
		Summary:   "no lock at all: the negative control that proves the checks find an oversell",
		NewLocker: func(Env) Locker { return None{} },
	})
	Register(Impl{
		Name:      "seed-setnx",
		Summary:   "classic PHP port: SETNX; EXPIRE with a timestamp; SET steals when TTL<0; DEL",
		NewLocker: func(e Env) Locker { return SeedSetNX{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "setnx-expire",
		Summary:   "SETNX then EXPIRE ttl (two round trips); DEL",
		NewLocker: func(e Env) Locker { return SetNXExpire{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "set-nx-ex",
		Summary:   "SET key 1 NX EX ttl; DEL",
		NewLocker: func(e Env) Locker { return SetNXEX{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "token",
		Summary:   "SET key token NX PX ttl; Lua compare-and-delete",
		NewLocker: func(e Env) Locker { return Token{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "token-wait",
		Summary:   "token, then WAIT 1 500ms: held only once a replica has it, else given back",
		Replicas:  1,
		NewLocker: func(e Env) Locker { return TokenWait{Client: e.Locks[0]} },
	})
	Register(Impl{
		Name:      "token-watchdog",
		Summary:   "token, renewed every ttl/3 while held (Redisson's watchdog)",
		NewLocker: func(e Env) Locker { return TokenWatchdog{e.Locks[0]} },
	})
	Register(Impl{
		Name:      "fencing",
		Summary:   "token + INCR fencing token; the stock store refuses stale tokens",
		NewLocker: func(e Env) Locker { return Fencing{e.Locks[0]} },
	})
	Register(Impl{
		Name:         "watch",
		Summary:      "no lock: WATCH stock, read, think, MULTI SET+RPUSH EXEC, retry on conflict",
		NewPurchaser: func(e Env) Purchaser { return Watch{Client: e.Stock, Retry: e.Retry} },
	})
	Register(Impl{
		Name:         "lua",
		Summary:      "no lock: check, DECR and record the order in one Lua script",
		NewPurchaser: func(e Env) Purchaser { return Lua{e.Stock} },
	})
	Register(Impl{
		Name:      "redislock",
		Summary:   "bsm/redislock: SET NX PX token, compare-and-delete",
		NewLocker: func(e Env) Locker { return Redislock{redislock.New(e.Locks[0])} },
	})
	Register(Impl{
		Name:      "redsync",
		Summary:   "go-redsync/redsync on one Redis",
		NewLocker: func(e Env) Locker { return NewRedsync(e.Locks...) },
	})
	Register(Impl{
		Name:    "redlock",
		Summary: "go-redsync/redsync Redlock over 5 independent Redis servers (majority of 3)",
		Nodes:   5,
		// The Redlock algorithm retries after a random delay, so that contenders stop
		// splitting the servers between them; redsync's own is 50-250ms.
		Retry: func(r Retry) Retry {
			r.Interval, r.Jitter = max(r.Interval, 100*time.Millisecond), 1
			return r
		},
		NewLocker: func(e Env) Locker { return NewRedsync(e.Locks...) },
	})
}
