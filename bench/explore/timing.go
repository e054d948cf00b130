package explore

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/stockbench/stockbench/results"
)

// Phase is a part of an exploration, for where its time went.
type Phase string

// The phases, in the order they run (shrinking and measuring take turns, region by
// region).
const (
	Searching Phase = "searching"
	Shrinking Phase = "shrinking"
	Measuring Phase = "measuring"
)

var phases = []Phase{Searching, Shrinking, Measuring}

// PhaseTime is where one phase's time went: how long it took, how many sales it ran with
// how many at once at most, and where those sales' own time went, summed.
type PhaseTime struct {
	Phase Phase         `json:"phase"`
	Wall  time.Duration `json:"wall_ns"`
	Sales int           `json:"sales"`
	Slots int           `json:"slots"`
	Spent results.Spent `json:"spent"`
}

// Busy is the share of the phase's slots (Wall times Slots) its sales filled: the rest
// is a slot waiting for the others of its batch, or on the explorer.
func (p PhaseTime) Busy() float64 {
	if p.Wall <= 0 || p.Slots <= 0 {
		return 0
	}
	return float64(p.Spent.Total()) / (float64(p.Wall) * float64(p.Slots))
}

// clock adds up an exploration's phases; its methods may be called from every sale.
type clock struct {
	mu    sync.Mutex
	slots int
	by    map[Phase]*PhaseTime
}

func newClock(slots int) *clock {
	c := &clock{slots: slots, by: map[Phase]*PhaseTime{}}
	for _, p := range phases {
		c.by[p] = &PhaseTime{Phase: p, Slots: slots}
	}
	return c
}

// sale counts a sale of phase p that spent s.
func (c *clock) sale(p Phase, s results.Spent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[p].Sales++
	c.by[p].Spent.Add(s)
}

// sales is how many sales ran, every phase.
func (c *clock) sales() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.by {
		n += t.Sales
	}
	return n
}

// since adds the time since start to phase p's wall time.
func (c *clock) since(p Phase, start time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[p].Wall += time.Since(start)
}

// times are the phases that ran, in order.
func (c *clock) times() []PhaseTime {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []PhaseTime
	for _, p := range phases {
		if t := c.by[p]; t.Wall > 0 || t.Sales > 0 {
			out = append(out, *t)
		}
	}
	return out
}

// writeTime writes where the exploration's time went, as explore.md's last section.
func (r *Report) writeTime(w io.Writer) {
	fmt.Fprintf(w, "\n## Where the time went\n\n")
	fmt.Fprintf(w, "| phase | wall | sales | sales a minute | slots busy | servers | set-up | selling | judging |\n|---|---|---|---|---|---|---|---|---|\n")
	var all results.Spent
	for _, t := range r.Time {
		all.Add(t.Spent)
		perMin := 0.0
		if m := t.Wall.Minutes(); m > 0 {
			perMin = float64(t.Sales) / m
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.1f | %.0f%% of %d | %s |\n", t.Phase, t.Wall.Round(time.Second), t.Sales, perMin, 100*t.Busy(), t.Slots, spentCells(t.Spent))
	}
	fmt.Fprintf(w, "\nEvery sale's own time, summed: %s. A slot not busy waited for the other sales of its batch, or on the explorer.\n", all)
}

// spentCells is s's parts as table cells, each with its share of the sales' time.
func spentCells(s results.Spent) string {
	total := s.Total()
	cell := func(d time.Duration) string {
		if total <= 0 {
			return "-"
		}
		return fmt.Sprintf("%s (%.0f%%)", d.Round(time.Second), 100*float64(d)/float64(total))
	}
	return cell(s.Servers) + " | " + cell(s.SetUp) + " | " + cell(s.Selling) + " | " + cell(s.Judging)
}
