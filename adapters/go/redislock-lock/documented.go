package main

// documented is what the adapter earns, by fault: a token under SET NX PX on one
// server, the verdicts of stockbench's built-in token design (and of redsync on one
// server, the same commands): safe while holders are alive and quick, a late write
// whenever the lease runs out under a holder that then writes; refreshed, those of
// token-watchdog.
func documented(refresh bool) map[string][]string {
	d := map[string][]string{
		"none": safe, "crash-acquire": safe, "crash-holder": safe, "net-latency": safe,
		"term-holder": safe, // SIGTERM stops a Go program at once: a dead holder
		"slow-work":   lateWrite, "cpu-starve": lateWrite, "client-pause": lateWrite, "redis-pause": lateWrite, "redis-restart": lateWrite, "failover": lateWrite,
		"clock-jump": lateWrite, "net-timeout": lateWrite, "rolling-restart": lateWrite, "server-errors": lateWrite,
		// Eviction takes the key from a holder inside its lease: the second holder's
		// write may land first, both inside their leases.
		"evict": {"OVERSOLD", "LOST", "LOCK-BROKEN"},
	}
	if refresh {
		// Refreshed while it works, or while its process is starved (it answers the
		// renewals late, not never): what stockbench's token-watchdog documents.
		d["slow-work"], d["cpu-starve"] = safe, safe
		// Refresh is a script of GET and PEXPIRE, which an OOM server still runs.
		d["server-errors"] = append([]string{"SAFE"}, lateWrite...)
	}
	return d
}

var (
	safe      = []string{"SAFE"}
	lateWrite = []string{"OVERSOLD", "LOST"}
)
