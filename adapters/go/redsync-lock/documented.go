package main

// documented is what the adapter earns, by fault, on nodes lock servers: on one, what the
// built-in redsync design documents; on several, what the built-in redlock does, but for
// what renewals change.
func documented(nodes int, extend, setNX bool) map[string][]string {
	if nodes == 1 {
		// Its holders ask Until() before each write: a local deadline, a little before
		// the key's expiry in Redis (less the drift margin), so a holder slowed or paused
		// before asking is told no (OVERLAP), one slowed between the answer and its
		// write may write late, and where Redis loses the key early (a restart, a
		// failover, its clock, an eviction) the library still says held while the next
		// holder is in (LOCK-BROKEN charged to it, or the late write's damage).
		d := map[string][]string{
			"none": safe, "crash-acquire": safe, "crash-holder": safe, "net-latency": safe,
			"term-holder": safe, // SIGTERM stops a Go program at once: a dead holder
			"slow-work":   toldNo, "client-pause": toldNo, "redis-pause": toldNo,
			"cpu-starve": lateWrite, "net-timeout": lateWrite, "server-errors": lateWrite,
			"app-pause": toldNo, "app-blackhole": lateWrite, // as client-pause and net-timeout
		}
		for _, f := range []string{"redis-restart", "failover", "clock-jump", "rolling-restart", "evict"} {
			d[f] = keyLost
		}
		if extend {
			d["slow-work"] = safe // renewed while it works
			// Extend is a script of GET and PEXPIRE, which an OOM server still runs:
			// not seen here, so either.
			d["server-errors"] = append([]string{"SAFE"}, lateWrite...)
		}
		return d
	}
	// Faults on one of the servers let a second holder in only when the victim held a
	// bare majority, a race; a pause past the TTL outlives the lock on all of them.
	d := map[string][]string{"none": safeOrStuck, "crash-acquire": safeOrStuck, "crash-holder": safeOrStuck, "term-holder": safeOrStuck}
	for _, f := range []string{"redis-restart", "failover", "clock-jump", "evict", "net-latency", "net-timeout", "cpu-starve"} {
		d[f] = aRace
	}
	// A cut instance is cut from every server, as its paused process is.
	for _, f := range []string{"slow-work", "client-pause", "redis-pause", "server-errors", "app-pause", "app-blackhole"} {
		d[f] = secondHolder // the victim holds past its TTL on every server
	}
	// A majority restarted empty in turn grants the lock to a second holder while
	// Until() still says held; renewals do not help, Extend renewing only where the key
	// still is, so after the third restart the lease is on two servers
	// (go-redsync/redsync PR #149).
	d["rolling-restart"] = keyLost
	if extend {
		d["slow-work"] = safeOrStuck // renewed while it works
		d["server-errors"] = aRace   // one of five answering errors, the lease renewed on the others: not seen here
		if setNX {
			// Each extend sets the key again on the server restarted before it, unless a
			// contender holds it there at that moment: with a few contenders (a leader's
			// lock: stockbench repro redsync-149) the lease stays on a majority, SAFE;
			// under a flash sale's, contenders hold the restarted servers often enough
			// that the lease may end on two, LOCK-BROKEN 9 seen here.
			d["rolling-restart"] = aRace
		}
	}
	return d
}

var (
	safe         = []string{"SAFE"}
	toldNo       = []string{"OVERLAP"}
	lateWrite    = []string{"OVERSOLD", "LOST", "OVERLAP"}
	keyLost      = []string{"OVERSOLD", "LOST", "OVERLAP", "LOCK-BROKEN"}
	safeOrStuck  = []string{"SAFE", "STUCK"}
	secondHolder = []string{"OVERSOLD", "LOST", "OVERLAP"}
	aRace        = []string{"SAFE", "STUCK", "OVERSOLD", "LOST", "OVERLAP", "LOCK-BROKEN"}
)
