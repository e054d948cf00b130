package main

import "github.com/stockbench/stockbench/adapters/go/protocol"

// documented is what the adapter earns, by fault: a token under SET NX PX on one
// server, what stockbench's built-in token design earns; refreshed, what token-watchdog
// does.
func documented(refresh bool) map[string][]string {
	d := protocol.TokenDocumented()
	if refresh {
		// Refreshed while it works, or while its process is starved (it answers the
		// renewals late, not never).
		d["slow-work"], d["cpu-starve"] = []string{"SAFE"}, []string{"SAFE"}
		// Refresh is a script of GET and PEXPIRE, which an OOM server still runs.
		d["server-errors"] = []string{"SAFE", "OVERSOLD", "LOST"}
	}
	return d
}
