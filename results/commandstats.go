package results

import (
	"strconv"
	"strings"
	"time"
)

// ServerStats is what a server's INFO says it has done since it started: the calls per
// command (commands that scripts run count too, as Redis counts them) and its CPU time.
type ServerStats struct {
	Calls map[string]int64
	CPU   time.Duration // used_cpu_sys + used_cpu_user
}

// ParseServerStats reads the INFO sections commandstats and cpu, in one reply or several
// replies joined.
func ParseServerStats(info string) ServerStats {
	s := ServerStats{Calls: make(map[string]int64)}
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if name == "used_cpu_sys" || name == "used_cpu_user" {
			if sec, err := strconv.ParseFloat(rest, 64); err == nil {
				s.CPU += time.Duration(sec * float64(time.Second))
			}
			continue
		}
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !isCmd {
			continue
		}
		for field := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					s.Calls[name] = n
				}
			}
		}
	}
	return s
}

// Add adds another server's figures to s.
func (s *ServerStats) Add(o ServerStats) {
	for name, n := range o.Calls {
		s.Calls[name] += n
	}
	s.CPU += o.CPU
}

// Commands is what Redis ran during a sale, from the INFO commandstats and cpu deltas.
type Commands struct {
	Total   int64            `json:"total"`
	PerSale float64          `json:"per_sale"`
	ByName  map[string]int64 `json:"by_command"`
	// CPUUs is the CPU time the servers spent during the sale, background work and the
	// harness's INFO included; CPUPerSaleUs divides it by the sales. Both are zero when a
	// server restarted during the sale, which resets its count.
	CPUUs        int64   `json:"cpu_us,omitempty"`
	CPUPerSaleUs float64 `json:"cpu_per_sale_us,omitempty"`
	// Shared is set when the server may have had other clients, whose commands count too.
	Shared bool `json:"shared_server,omitempty"`
}

// PingsUnknown tells NewCommands that the harness cannot count its own PINGs (other
// processes watched the same servers): every PING is left out.
const PingsUnknown = -1

// NewCommands returns what the servers did between two snapshots, and per sale, leaving
// out the harness's own: the INFO that took the first snapshot and ownPings, the PINGs
// that watched whether the servers still answered (PingsUnknown: every PING). A design's
// own PING stays a command: one more round trip per purchase is what a speed gate
// counts.
func NewCommands(before, after ServerStats, sales int, ownPings int64) *Commands {
	c := &Commands{ByName: make(map[string]int64)}
	for name, n := range after.Calls {
		d := n - before.Calls[name]
		if name == "ping" {
			if ownPings == PingsUnknown {
				continue
			}
			d -= ownPings
		}
		if d > 0 && name != "info" {
			c.ByName[name] = d
			c.Total += d
		}
	}
	if cpu := after.CPU - before.CPU; cpu > 0 {
		c.CPUUs = int64(cpu / time.Microsecond)
	}
	if sales > 0 {
		c.PerSale = float64(c.Total) / float64(sales)
		c.CPUPerSaleUs = float64(c.CPUUs) / float64(sales)
	}
	return c
}
