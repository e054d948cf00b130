package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// SaleKind is what a run sold through.
type SaleKind string

// The kinds of sale.
const (
	// LockSale is a flash sale through a lock design.
	LockSale SaleKind = "lock"
	// QueueSale is a sale through a queue design.
	QueueSale SaleKind = "queue"
)

// Run is one scenario run with one implementation.
type Run struct {
	Scenario string `json:"scenario"`
	Impl     string `json:"impl"`
	// Source names the results the run was read from when a report compares several; it
	// is not saved.
	Source string `json:"-"`
	Params Params `json:"params"`
	// Complete is false when the run was cut short; its figures cover what happened
	// until then.
	Complete bool          `json:"complete"`
	Error    string        `json:"error,omitempty"`
	Started  time.Time     `json:"started_at"`
	Duration time.Duration `json:"duration_ns"`
	// Spent is where the sale's wall time went, servers included (see Spent).
	Spent Spent `json:"-"`

	// Kind is what the run sold through.
	Kind SaleKind `json:"kind"`
	// Verdict is what the oracles concluded, stored once: its class and findings, and its
	// cell and line as views (Verdict.Cell(), Verdict.String()). results.json holds the
	// views, "verdict", "class", "cell" and "findings".
	Verdict oracle.Verdict `json:"-"`
	Oracle  oracle.Report  `json:"oracle"`
	// Expected is the classes the implementation documents for this fault plan; empty
	// when it documents none. AsExpected says whether Class is one of them.
	Expected   []oracle.Class `json:"expected,omitempty"`
	AsExpected *bool          `json:"as_expected,omitempty"`
	// Undocumented is set when the design documents no verdict for any sale (a design of
	// the user's that says nothing): a finding of its is damage nobody claimed, which
	// fails the sale (Policy.Stand). A design that documents some, but not for this
	// sale, leaves Expected empty without it.
	Undocumented bool `json:"undocumented,omitempty"`
	// NotExercised names the faults of the plan that never struck: the verdict says
	// nothing about them (Class is NOT-EXERCISED where nothing else was found).
	NotExercised []string `json:"not_exercised,omitempty"`
	// Queue is what the queue oracles found, for a queue sale.
	Queue *oracle.QueueReport `json:"queue,omitempty"`
	// Backlog is the queue's length over time, for a queue sale.
	Backlog []Sample `json:"backlog,omitempty"`
	// Recovery is what became of the tasks workers died holding, for a queue sale with
	// a worker crash; Latency["recovery"] is how long each took to be delivered again.
	Recovery *Recoveries `json:"recovery,omitempty"`
	// Sales is the cumulative count of confirmed orders over time (see Timeline).
	Sales []Sample `json:"sales_over_time,omitempty"`
	// Tries is how often the buyers of a flash sale tried for the lock, or to buy.
	Tries *Tries `json:"tries_per_buyer,omitempty"`
	// Shard is set for a run of a sharded sale: one shard's partial record, or the merge
	// of every shard's.
	Shard *ShardInfo `json:"shard,omitempty"`
	// Sweep, for a run of a sweep, is the parameter varied and its value here.
	Sweep *SweepPoint `json:"sweep,omitempty"`
	// DamageRate is the damage per 10,000 sales, with its confidence interval.
	DamageRate *Rate `json:"damage_per_10k,omitempty"`
	// LostLocks is why holders lost their lock, for a flash sale through a lock.
	LostLocks *LostLocks `json:"lost_locks,omitempty"`
	// Fairness is read from the main latency: the purchase, or the queued order.
	Fairness *Fairness `json:"fairness,omitempty"`
	// Linearizability is porcupine's verdict on the purchases, when it was asked for.
	Linearizability *oracle.Linearizability `json:"linearizability,omitempty"`
	// Events is what the faults did, when.
	Events []faults.Event `json:"fault_events,omitempty"`
	// Errors counts the Redis errors buyers met; FirstError is the first of them. Under
	// faults that act on servers they are expected and do not end the run.
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// Log is the last of what the design's own processes wrote to stderr (a process
	// adapter's), kept for when they misbehave.
	Log string `json:"log,omitempty"`
	// Sale is the sale as a value, which replay, shrink and the explorer rerun and
	// change; nil for a shard's sale and in records older than it.
	Sale *Sale `json:"sale,omitempty"`
	// Rerun is the command line, after "stockbench", that runs the sale again alone as
	// it ran, rendered from Sale (older records have it alone); empty for a shard's sale.
	Rerun []string `json:"rerun,omitempty"`
	// Repeats is how often reruns of the sale earned its class, once replay has rerun it.
	Repeats *Repeats `json:"repeats,omitempty"`
	// Draws, when the sale ran with several seeds (--runs), is what every draw earned;
	// the record is then its worst draw.
	Draws *Draws `json:"draws,omitempty"`
	// Spread, when the sale was run several times for its speed, is each run's figures.
	Spread *Spread `json:"spread,omitempty"`

	// SalesPerSec is confirmed orders over the time to the last confirmed order.
	SalesPerSec float64            `json:"sales_per_sec"`
	Latency     map[string]Latency `json:"latency"`
	Commands    *Commands          `json:"redis_commands,omitempty"`
}

// Spread is the speed of several runs of one sale in one record (matrix --repeat): each
// run's median main latency and sales/s, the record's own first. The gate's soft rules
// test a change against it, since one sale's samples say nothing of how far a second
// run of the same build lands from the first.
type Spread struct {
	P50Us       []int64   `json:"p50_us"`
	SalesPerSec []float64 `json:"sales_per_sec"`
}

// Add appends run's figures to s.
func (s *Spread) Add(run *Run) {
	_, l := run.MainLatency()
	s.P50Us = append(s.P50Us, l.P50Us)
	s.SalesPerSec = append(s.SalesPerSec, run.SalesPerSec)
}

// Repeats is what reruns of a sale earned: Times reruns, Same of them its class, and
// the classes they earned with how often.
type Repeats struct {
	Times   int                  `json:"times"`
	Same    int                  `json:"same"`
	Classes map[oracle.Class]int `json:"classes"`
}

// Steady reports whether every rerun earned the sale's class.
func (r *Repeats) Steady() bool { return r == nil || r.Same == r.Times }

// Params are the settings a scenario ran with; durations as Go duration strings.
type Params struct {
	Buyers        int     `json:"buyers"`
	Stock         int64   `json:"stock"`
	Critical      string  `json:"critical"`
	Think         string  `json:"think"`
	TTL           string  `json:"ttl"`
	RetryInterval string  `json:"retry_interval"`
	RetryTimeout  string  `json:"retry_timeout"`
	RetryJitter   float64 `json:"retry_jitter"`
	Conns         int     `json:"conns"`
	// Apps is how many application instances the buyers came through, each with a pool
	// of Conns connections (a flash sale; 0 or 1: one).
	Apps int `json:"apps,omitempty"`
	// Serve is how many buyers each instance served at once (0: no limit).
	Serve int `json:"serve,omitempty"`
	// Pool is how many processes of its own the design ran in per instance (a process
	// adapter's pool; 0: none), each serving one buyer at a time.
	Pool   int    `json:"pool,omitempty"`
	Seed   uint64 `json:"seed"`
	Faults string `json:"faults"`
	// Queue sales only.
	Workers    int    `json:"workers,omitempty"`
	Fulfil     string `json:"fulfil,omitempty"`
	Visibility string `json:"visibility,omitempty"`
	// Rate is arrivals per second under an open load (0: all at once), rising or falling
	// to RampTo; buyers arriving in the first Warmup are left out of the latencies.
	Rate   float64 `json:"rate,omitempty"`
	RampTo float64 `json:"ramp_to,omitempty"`
	Warmup string  `json:"warmup,omitempty"`
	// Waves and WaveEvery are a scheduled drop's (Buyers are then its scheduler
	// instances): the stock went on sale in Waves waves, one every WaveEvery.
	Waves     int    `json:"waves,omitempty"`
	WaveEvery string `json:"wave_every,omitempty"`
}

// Sample is a value at a moment of a run.
type Sample struct {
	At time.Duration `json:"at_ns"`
	N  int64         `json:"n"`
}

// Judge sets the run's verdict from what the oracles concluded and the plan's faults
// that never struck, and whether its class is one the design documents (expected, when
// it documents any). A sale that found nothing under a fault that never struck is
// NOT-EXERCISED, not SAFE. It is the one function that judges a sale of any kind.
func (r *Run) Judge(v oracle.Verdict, unfired []string, expected []oracle.Class) {
	r.Verdict, r.NotExercised = v.WithUnfired(unfired), unfired
	if r.Verdict.Findings == nil {
		r.Verdict.Findings = []string{}
	}
	if len(expected) > 0 {
		as := slices.Contains(expected, r.Verdict.Class)
		r.Expected, r.AsExpected = expected, &as
	}
}

// runRecord is Run without its methods, for encoding/json.
type runRecord Run

// runJSON is a Run as results.json holds it: its verdict as the views readers use.
type runJSON struct {
	Verdict  string       `json:"verdict"`
	Class    oracle.Class `json:"class"`
	Cell     string       `json:"cell"`
	Findings []string     `json:"findings"`
	*runRecord
}

// MarshalJSON writes the run with its verdict's views.
func (r Run) MarshalJSON() ([]byte, error) {
	return json.Marshal(runJSON{r.Verdict.String(), r.Verdict.Class, r.Verdict.Cell(), r.Verdict.Findings, (*runRecord)(&r)})
}

// UnmarshalJSON reads a run and its verdict back from the views.
func (r *Run) UnmarshalJSON(b []byte) error {
	w := runJSON{runRecord: (*runRecord)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Class == "" && w.Cell == "" {
		return nil // no verdict recorded: the readers of a file refuse it
	}
	v, err := oracle.ParseVerdict(w.Class, w.Cell, w.Findings)
	if err != nil {
		return fmt.Errorf("run %s/%s: %w", r.Scenario, r.Impl, err)
	}
	r.Verdict = v
	return nil
}

// FaultPlan is the fault plan the run ran under, faults.None for none.
func (r *Run) FaultPlan() string {
	if r.Params.Faults == "" {
		return faults.None
	}
	return r.Params.Faults
}

// Subject is what a matrix or a plot groups the run under: its scenario, and for a queue
// sale the fulfil, since the same designs behave differently with each.
func (r *Run) Subject() string {
	if r.Kind == QueueSale && r.Params.Fulfil != "" {
		return r.Scenario + " (" + r.Params.Fulfil + " fulfil)"
	}
	return r.Scenario
}

// Key names the sale in a run's record, its baseline and its reruns: subject, design
// and fault plan, as "flash-sale/set-nx-ex/none".
func (r *Run) Key() string { return r.Subject() + "/" + r.Impl + "/" + r.FaultPlan() }

// MainLatency is the latency the table and the plots show: the whole purchase, or for a
// queue sale an order's time from its arrival to its fulfilment.
func (r *Run) MainLatency() (Phase, Latency) {
	if l, ok := r.Latency[Purchase.String()]; ok {
		return Purchase, l
	}
	return Queue, r.Latency[Queue.String()]
}

// FillFairness derives Fairness from the main latency histogram when it is missing.
func (r *Run) FillFairness() {
	if r.Fairness != nil {
		return
	}
	phase, l := r.MainLatency()
	if l.Count == 0 || l.Hist == "" {
		return
	}
	if f, err := FairnessOf(phase, l); err == nil {
		r.Fairness = &f
	}
}

// Label names the run in tables and legends: its implementation, and the results it came
// from when a report puts several side by side.
func (r *Run) Label() string {
	if r.Source == "" {
		return r.Impl
	}
	return r.Impl + " @" + r.Source
}

// SweepPoint is where a run of a sweep sits: the sale setting varied (its flag's name),
// its value as written, and that value as a number for the plots' x axis (seconds for a
// duration).
type SweepPoint struct {
	Param string  `json:"param"`
	Value string  `json:"value"`
	X     float64 `json:"x"`
	// Unit is X's unit, for the axis ("s" for a duration; "" for a count or a share).
	Unit string `json:"unit,omitempty"`
}

// ShardInfo is where a run sits in a sale run by several load generators (shards).
type ShardInfo struct {
	// Index is the shard's number from 0, of Count; Merged is set instead for the run
	// merged from all Count.
	Index  int  `json:"index"`
	Count  int  `json:"count"`
	Merged bool `json:"merged,omitempty"`
	// Late is how long after the common start the shard heard of it (the latest shard's,
	// merged): its first buyers started that late.
	Late time.Duration `json:"late_ns,omitempty"`
	// Attempt names one start of the sale under its run id: the start on Redis's clock,
	// in microseconds, the same in every shard that met at that barrier. A rerun under
	// the same id is another attempt, and its parts replace the earlier ones.
	Attempt int64 `json:"attempt,omitempty"`
	// Lost are the shards the merge had no record of (killed, or their nodes lost):
	// their buyers' outcomes are unknown, so the merged record is incomplete. In the
	// first shard's own record, those it took for lost when it read the final state.
	Lost []int `json:"lost,omitempty"`
}
