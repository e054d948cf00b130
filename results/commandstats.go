package results

import (
	"strconv"
	"strings"
)

// CommandStats reads the calls per command from an INFO commandstats reply. Commands that
// scripts run count too, as Redis counts them.
func CommandStats(info string) map[string]int64 {
	calls := make(map[string]int64)
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err == nil {
					calls[name] = n
				}
			}
		}
	}
	return calls
}

// Commands is what Redis ran during a sale, from the INFO commandstats delta.
type Commands struct {
	Total   int64            `json:"total"`
	PerSale float64          `json:"per_sale"`
	ByName  map[string]int64 `json:"by_command"`
	// Shared is set when the server may have had other clients, whose commands count too.
	Shared bool `json:"shared_server,omitempty"`
}

// NewCommands returns the commands run between two CommandStats snapshots, leaving out
// the INFO that took the first one, and sales per sale.
func NewCommands(before, after map[string]int64, sales int) *Commands {
	c := &Commands{ByName: make(map[string]int64)}
	for name, n := range after {
		if d := n - before[name]; d > 0 && name != "info" {
			c.ByName[name] = d
			c.Total += d
		}
	}
	if sales > 0 {
		c.PerSale = float64(c.Total) / float64(sales)
	}
	return c
}
