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

// PhaseTime is where one phase's time went: how long it took, how many sales it ran,
// and where those sales' own time went, summed.
type PhaseTime struct {
	Phase Phase         `json:"phase"`
	Wall  time.Duration `json:"wall_ns"`
	Sales int           `json:"sales"`
	Spent results.Spent `json:"spent"`
	// Took is the sales' wall time as the explorer saw it, each sale's from its call to
	// its return, summed: what an estimate of the next sales' time rests on.
	Took time.Duration `json:"took_ns"`
}

// AtOnce is how many of the phase's sales ran at once, on average over its wall time.
func (p PhaseTime) AtOnce() float64 {
	if p.Wall <= 0 {
		return 0
	}
	return float64(p.Spent.Total()) / float64(p.Wall)
}

// Limit is how many sales the exploration let run at once: where the limit started, its
// lowest and highest, and its ceiling (Config.Parallel).
type Limit struct {
	Start   int `json:"start"`
	Low     int `json:"low"`
	High    int `json:"high"`
	Ceiling int `json:"ceiling"`
}

// clock adds up an exploration's phases; its methods may be called from every sale.
type clock struct {
	mu     sync.Mutex
	by     map[Phase]*PhaseTime
	active map[Phase]int       // spans of the phase under way
	from   map[Phase]time.Time // when the first of them began
}

func newClock() *clock {
	c := &clock{by: map[Phase]*PhaseTime{}, active: map[Phase]int{}, from: map[Phase]time.Time{}}
	for _, p := range phases {
		c.by[p] = &PhaseTime{Phase: p}
	}
	return c
}

// total is every phase's sales and their wall time, each sale's from its call to its
// return, summed.
func (c *clock) total() (sales int, took time.Duration) {
	for _, t := range c.times() {
		sales += t.Sales
		took += t.Took
	}
	return sales, took
}

// enter begins a span of phase p and returns its end. A phase's wall time is the union
// of its spans: regions settled side by side count their shrinking (measuring) once.
func (c *clock) enter(p Phase) (leave func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active[p]++; c.active[p] == 1 {
		c.from[p] = time.Now()
	}
	return sync.OnceFunc(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.active[p]--; c.active[p] == 0 {
			c.by[p].Wall += time.Since(c.from[p])
		}
	})
}

// sale counts a sale of phase p that took took and spent s.
func (c *clock) sale(p Phase, took time.Duration, s results.Spent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[p].Sales++
	c.by[p].Took += took
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
	fmt.Fprintf(w, "| phase | wall | sales | sales a minute | sales at once | servers | set-up | selling | judging |\n|---|---|---|---|---|---|---|---|---|\n")
	var all results.Spent
	for _, t := range r.Time {
		all.Add(t.Spent)
		perMin := 0.0
		if m := t.Wall.Minutes(); m > 0 {
			perMin = float64(t.Sales) / m
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.1f | %.1f | %s |\n", t.Phase, t.Wall.Round(time.Second), t.Sales, perMin, t.AtOnce(), spentCells(t.Spent))
	}
	fmt.Fprintf(w, "\nEvery sale's own time, summed: %s. Sales at once: the mean over the phase. The machine's idle CPU set how many could run at once: from %d, between %d and %d, at most %d (`--parallel`).\n",
		all, r.Limit.Start, r.Limit.Low, r.Limit.High, r.Limit.Ceiling)
	fmt.Fprintf(w, "\nThe search took %s of the %s budget: half at least, and up to three quarters while a fault of the space had struck in fewer than %d draws. Shrinking and measuring the regions, the most promising first, took the rest",
		r.Searched.Round(time.Second), r.Budget, MinStrikes)
	if r.Resumed > 0 {
		fmt.Fprintf(w, ", but for what was left over once every region was settled: the search resumed %d time(s) for half of it, and its new regions were settled in the other half", r.Resumed)
	}
	fmt.Fprintln(w, ".")
	if r.RerunCost > 0 && r.RerunCost != 1 {
		fmt.Fprintf(w, "\nThe reruns took %.2f times what their regions' first sales had said; how much settling each region was given followed that from the first few reruns on.\n", r.RerunCost)
	}
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
