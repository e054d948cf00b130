package results

import (
	"fmt"
	"strings"
)

// LostLocks is why the holders of a flash sale lost their lock, where the sale could
// tell: a hold is lost when the release found the lock gone (a design with an owner check
// says so) or, for a lease that does not renew itself, when it outlasted the TTL. Each
// lost hold is put down to what took most of its time.
type LostLocks struct {
	// Holds is how many holders finished their hold; Lost how many of them had lost the
	// lock by then.
	Holds int `json:"holds"`
	Lost  int `json:"lost"`
	// PoolWait: the holder waited longest for a connection of its application's pool,
	// behind other buyers' calls (the harness's topology, or the user's, not the design).
	PoolWait int `json:"pool_wait"`
	// Work: the holder worked longest (its think time, or slow work under a fault).
	Work int `json:"work"`
	// Paused: the holder was stopped longest (a client pause: its renewals stopped too).
	Paused int `json:"paused"`
	// Other: none of these; the round trips themselves took the time.
	Other int `json:"other"`
}

// Add adds o's counts to l's: another load generator's holds of the same sale.
func (l *LostLocks) Add(o LostLocks) {
	l.Holds, l.Lost, l.PoolWait = l.Holds+o.Holds, l.Lost+o.Lost, l.PoolWait+o.PoolWait
	l.Work, l.Paused, l.Other = l.Work+o.Work, l.Paused+o.Paused, l.Other+o.Other
}

// Causes are the lost holds by cause, in the order the report shows them.
func (l LostLocks) Causes() []struct {
	Name string
	N    int
} {
	return []struct {
		Name string
		N    int
	}{{"waiting for a pooled connection", l.PoolWait}, {"working past the TTL", l.Work}, {"paused", l.Paused}, {"round trips", l.Other}}
}

// String says how many holds were lost and why, as the report shows it: "45 of 46 holds:
// 45 waiting for a pooled connection"; "none of 46 holds" when none was.
func (l *LostLocks) String() string {
	if l == nil || l.Holds == 0 {
		return "-"
	}
	if l.Lost == 0 {
		return fmt.Sprintf("none of %d holds", l.Holds)
	}
	var why []string
	for _, c := range l.Causes() {
		if c.N > 0 {
			why = append(why, fmt.Sprintf("%d %s", c.N, c.Name))
		}
	}
	return fmt.Sprintf("%d of %d holds: %s", l.Lost, l.Holds, strings.Join(why, ", "))
}
