package main

import "github.com/stockbench/stockbench/adapters/go/protocol"

// documented is what the adapter earns, by fault: a token under SET NX PX on one
// server whose holders ask the lock's TTL before each write (a script that reads the
// key where it still holds their token), what redis-py's lock earns asked owned();
// refreshed, a holder that works long, or whose process is starved (its renewals come
// late, not never), keeps its lock.
func documented(refresh bool) map[string][]string {
	d := protocol.TokenToldDocumented()
	if refresh {
		d["slow-work"], d["cpu-starve"] = []string{"SAFE"}, []string{"SAFE"}
		// Refresh is a script of GET and PEXPIRE, which an OOM server still runs.
		d["server-errors"] = []string{"SAFE", "OVERLAP"}
	}
	return d
}
