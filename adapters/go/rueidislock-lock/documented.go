package main

import "github.com/stockbench/stockbench/adapters/go/protocol"

// documented is what the adapter earns, by fault: SET NX PXAT keys on one server, which
// the library extends itself while the holder's process runs, so what stockbench's
// token-watchdog earns: a holder that works long, or whose process is starved (the
// extensions come late, not never), keeps its lock; one whose process stops (paused)
// or whose key goes (a restart, a failover, a clock jump) may write late.
func documented() map[string][]string {
	d := protocol.TokenDocumented()
	d["slow-work"], d["cpu-starve"] = []string{"SAFE"}, []string{"SAFE"}
	// An extension an OOM server refuses cancels the lock's context: not seen to let a
	// late write through here, so either.
	d["server-errors"] = []string{"SAFE", "OVERSOLD", "LOST"}
	return d
}
