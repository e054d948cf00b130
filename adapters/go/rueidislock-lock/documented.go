package main

import "github.com/stockbench/stockbench/adapters/go/protocol"

// documented is what the adapter earns, by fault: SET NX PXAT keys on one server, which
// the library extends itself while the holder's process runs, so what stockbench's
// token-watchdog earns: a holder that works long, or whose process is starved (the
// extensions come late, not never), keeps its lock; one whose process stops (paused)
// or whose key goes (a restart, a failover, a clock jump) may write late. Its holders
// ask the lock's context before each write, which the library cancels once it learns
// the key is not held (an invalidation, a failed extension, a connection lost): told in
// time, a holder does not write, and the next holder's time inside the first one's
// lease is all there is (OVERLAP, LOCK-BROKEN); told late, the late write is made.
func documented() map[string][]string {
	d := protocol.TokenDocumented()
	d["slow-work"], d["cpu-starve"] = []string{"SAFE"}, []string{"SAFE"}
	// An extension an OOM server refuses cancels the lock's context: not seen to let a
	// late write through here, so either.
	d["server-errors"] = []string{"SAFE", "OVERSOLD", "LOST", "OVERLAP"}
	for _, f := range []string{"client-pause", "redis-pause", "redis-restart", "rolling-restart", "failover", "clock-jump", "net-timeout", "evict", "app-pause", "app-blackhole"} {
		d[f] = []string{"OVERSOLD", "LOST", "OVERLAP", "LOCK-BROKEN"}
	}
	return d
}
