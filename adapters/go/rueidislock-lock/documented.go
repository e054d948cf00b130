package main

// documented is what the adapter earns, by fault: SET NX PXAT keys on one server, which
// the library extends itself while the holder's process runs; so a holder that works
// long keeps its lock, and one whose process stops (paused, starved, its server gone
// for longer than the lease) loses it and may then write late.
func documented() map[string][]string {
	return map[string][]string{
		"none": safe, "crash-acquire": safe, "crash-holder": safe, "net-latency": safe,
		"term-holder": safe, // SIGTERM stops a Go program at once: a dead holder
		// Extended every ExtendInterval while it works, or while its process is starved
		// (the extensions come late, not never): what stockbench's token-watchdog earns.
		"slow-work": safe, "cpu-starve": safe,
		// An extension an OOM server refuses cancels the lock's context: not seen to let
		// a late write through here, so either.
		"server-errors": append([]string{"SAFE"}, lateWrite...),
		"client-pause":  lateWrite, "redis-pause": lateWrite, "redis-restart": lateWrite, "failover": lateWrite,
		"clock-jump": lateWrite, "net-timeout": lateWrite, "rolling-restart": lateWrite,
		"evict": {"OVERSOLD", "LOST", "LOCK-BROKEN"},
	}
}

var (
	safe      = []string{"SAFE"}
	lateWrite = []string{"OVERSOLD", "LOST"}
)
