// Package live shows a run while it goes: a dashboard page that fills in sale by sale,
// the same figures as OpenMetrics on /metrics for Prometheus, and the page saved at the
// end as one file that opens offline.
//
// A Board consumes what the sales report (scenarios.Progress once a second, the run of
// each sale as it ends); it never drives a sale, so a run without a dashboard does not
// know it exists.
package live

import (
	"cmp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// Sale names one sale of the run as the board lists it before it starts.
type Sale struct {
	Scenario string `json:"scenario"`
	Design   string `json:"design"`
	Faults   string `json:"faults"`
}

// The states a sale of the board goes through.
const (
	Waiting = "waiting"
	Running = "running"
	Done    = "done"
)

// State is everything the page shows, as it is served on /state and saved in the page.
type State struct {
	Run string `json:"run"`
	// Args are the run's flags, passwords masked.
	Args    string    `json:"args"`
	Started time.Time `json:"started"`
	// Ended is set once the run is over; Incomplete says why it stopped short.
	Ended      bool        `json:"ended"`
	Incomplete string      `json:"incomplete,omitempty"`
	Sales      []SaleState `json:"sales"`
}

// SaleState is one sale: its place in the matrix, how far it got, what it saw go wrong
// so far, and once done its verdict.
type SaleState struct {
	Sale
	State  string `json:"state"`
	Stock  int64  `json:"stock"`
	Buyers int    `json:"buyers"`
	Sold   int64  `json:"sold"`
	Done   int    `json:"done"`
	// Oversold and Seen are the counters as the sale saw them; the verdict sorts them.
	Oversold int64          `json:"oversold"`
	Seen     scenarios.Seen `json:"seen"`
	Points   []Point        `json:"points"`
	Windows  []Window       `json:"windows"`
	// Cell and Verdict are the oracles' word once the sale is done, Rerun the command
	// that runs it again alone; Error why it did not finish.
	Cell    string `json:"cell,omitempty"`
	Verdict string `json:"verdict,omitempty"`
	Rerun   string `json:"rerun,omitempty"`
	Error   string `json:"error,omitempty"`

	lat latency // for /metrics
}

// Point is one second of a sale: T seconds in, what was sold and done by then, the
// sales a second over the last interval, and the main latency's p50 and p99 in
// milliseconds over the interval (nil when nothing finished in it).
type Point struct {
	T    float64  `json:"t"`
	Sold int64    `json:"sold"`
	Done int      `json:"done"`
	Rate float64  `json:"rate"`
	P50  *float64 `json:"p50,omitempty"`
	P99  *float64 `json:"p99,omitempty"`
}

// Window is what a fault did, from From to To seconds into the sale (the same for a
// fault of one moment); Open while a server fault is still under way.
type Window struct {
	Fault  string  `json:"fault"`
	From   float64 `json:"from"`
	To     float64 `json:"to"`
	Detail string  `json:"detail"`
	Open   bool    `json:"open,omitempty"`
}

// Board is the live state of one run. Its methods are safe for concurrent use: sales run
// side by side.
type Board struct {
	mu    sync.Mutex
	state State
	// prev is each running sale's last latency histogram, to take the next interval's
	// quantiles from.
	prev map[int]*hdrhistogram.Histogram
	// scraper and watcher are /metrics's readers and the live page's (its /state).
	scraper, watcher reader
}

// reader is one kind of client of a run's server: whether it read during the run, and a
// channel closed once it read after the run ended, so that the server waits for it.
type reader struct {
	read  bool
	after chan struct{}
	once  sync.Once
}

// NewBoard returns the board of a run with id and flags args, of sales in order.
func NewBoard(id, args string, sales []Sale) *Board {
	b := &Board{state: State{Run: id, Args: args, Started: time.Now().UTC()}, prev: map[int]*hdrhistogram.Histogram{}}
	b.scraper.after, b.watcher.after = make(chan struct{}), make(chan struct{})
	for _, s := range sales {
		b.state.Sales = append(b.state.Sales, SaleState{Sale: s, State: Waiting, Points: []Point{}, Windows: []Window{}})
	}
	return b
}

// Watch returns the Progress hook of sale i (0-based).
func (b *Board) Watch(i int) func(scenarios.Progress) {
	return func(p scenarios.Progress) { b.tick(i, p) }
}

func (b *Board) tick(i int, p scenarios.Progress) {
	// The interval's quantiles are taken outside the lock: a histogram diff is the
	// heaviest thing the board does.
	b.mu.Lock()
	prev := b.prev[i]
	b.mu.Unlock()
	pt := Point{T: p.Elapsed.Seconds(), Sold: p.Sold, Done: p.Done, Rate: p.SalesPerSec}
	var lat latency
	if p.Latency != nil {
		pt.P50, pt.P99 = quantiles(since(p.Latency, prev))
		lat = latencyOf(p.Latency)
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	s := &b.state.Sales[i]
	if s.State == Done {
		return
	}
	s.State, s.Stock, s.Buyers, s.Sold, s.Done = Running, p.Stock, p.Buyers, p.Sold, p.Done
	s.Oversold, s.Seen, s.lat = p.Oversold(), p.Seen, lat
	s.Windows = windows(p.Faults, p.Under)
	if n := len(s.Points); p.Final && n > 0 && pt.T-s.Points[n-1].T < 0.25 {
		s.Points[n-1] = pt // the last report came just after a tick: one point, not two
	} else {
		s.Points = append(s.Points, pt)
	}
	if p.Latency != nil {
		b.prev[i] = p.Latency
	}
}

// Ended records sale i's run: its verdict, and the command that reruns it.
func (b *Board) Ended(i int, run results.Run) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := &b.state.Sales[i]
	s.State, s.Cell, s.Verdict, s.Error = Done, run.Verdict.Cell(), run.Verdict.String(), run.Error
	if len(run.Rerun) > 0 {
		s.Rerun = "stockbench " + strings.Join(run.Rerun, " ")
	}
	delete(b.prev, i)
}

// Finish marks the run over; incomplete says why it stopped short, if it did.
func (b *Board) Finish(incomplete string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.state.Ended, b.state.Incomplete = true, incomplete
	clear(b.prev)
}

// State returns a copy of the board's state.
func (b *Board) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.state
	st.Sales = slices.Clone(st.Sales)
	for i := range st.Sales {
		s := &st.Sales[i]
		s.Points, s.Windows = slices.Clone(s.Points), slices.Clone(s.Windows)
	}
	return st
}

// windows are a sale's fault events as windows, the ones over and the ones under way.
func windows(over, under []faults.Event) []Window {
	w := make([]Window, 0, len(over)+len(under))
	add := func(e faults.Event, open bool) {
		from := e.Began
		if from == 0 {
			from = e.At
		}
		w = append(w, Window{Fault: string(e.Fault), From: from.Seconds(), To: e.At.Seconds(), Detail: e.Detail, Open: open})
	}
	for _, e := range over {
		add(e, false)
	}
	for _, e := range under {
		add(e, true)
	}
	slices.SortStableFunc(w, func(a, b Window) int { return cmp.Compare(a.From, b.From) })
	return w
}

// since is what cur recorded after prev (both cumulative, prev nil for all of cur).
func since(cur, prev *hdrhistogram.Histogram) *hdrhistogram.Histogram {
	if prev == nil {
		return cur
	}
	c, p := cur.Export(), prev.Export()
	if len(c.Counts) != len(p.Counts) {
		return cur
	}
	for i := range c.Counts {
		c.Counts[i] -= p.Counts[i]
	}
	return hdrhistogram.Import(c)
}

// quantiles are h's p50 and p99 in milliseconds, nil when h is empty.
func quantiles(h *hdrhistogram.Histogram) (p50, p99 *float64) {
	if h.TotalCount() == 0 {
		return nil, nil
	}
	ms := func(q float64) *float64 {
		v := float64(h.ValueAtQuantile(q)) / 1000
		return &v
	}
	return ms(50), ms(99)
}
