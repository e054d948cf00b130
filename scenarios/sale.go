package scenarios

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/faults"
)

// Defaults for a Sale's zero fields.
const (
	DefaultConns = 64
	// DefaultPrefix is the key prefix of a sale that names none.
	DefaultPrefix = "{stockbench}"
)

// Sale is what every sale has: who buys, how much there is, over how many connections,
// when buyers arrive and what goes wrong. Buyers must be set; zero fields take the
// defaults named in their comments.
type Sale struct {
	// Name labels the sale in results (a preset's name).
	Name string
	// Buyers is the number of buyers, each buying at most once (or enqueuing one order).
	Buyers int
	// Stock is the number of units on sale.
	Stock int64
	// Conns is the connection pool the sale is meant to run over (a queue sale's buyers
	// and workers have one each); the caller builds the clients with it. Default:
	// DefaultConns.
	Conns int
	// Seed makes random draws repeatable: the same seed draws the same think times.
	Seed uint64
	// Prefix is put before every key the sale touches. It should hold a hash tag, as in
	// the default, so that the keys share a cluster slot; give each concurrent sale its own.
	// Default: DefaultPrefix.
	Prefix string
	// Faults is what goes wrong during the sale. Default: nothing.
	Faults faults.Plan
	// Rate, when set, makes the load open: buyers arrive at Rate a second (rising or
	// falling linearly to RampTo by the last buyer, when RampTo is set) whether or not
	// earlier ones are done, and each buyer's latencies count from its intended arrival
	// (see Pacer). Default: 0, every buyer at once (the closed model).
	Rate, RampTo float64
	// Warmup leaves the buyers who arrive in the sale's first Warmup out of the latency
	// figures; the ledger and the oracles still count them. Default: none.
	Warmup time.Duration
	// Progress, when set, is called about once a second while the sale runs, from a
	// goroutine of its own. Default: nil.
	Progress func(Progress)
	// KeyLease, when set, keeps a TTL of KeyLease on the sale's keys while it runs,
	// renewed four times a second, so that the keys of a run killed before its clean-up
	// expire on their own: for a user's own Redis (DefaultKeyLease). A lock keeps the TTL
	// its design gives it, up to KeyLease; one left with none gets KeyLease once it is
	// stuck. Default: none, for servers the harness throws away.
	KeyLease time.Duration
	// Shard makes the sale one shard of several, each run by a process of its own on the
	// same Redis (see Shard). Default: the whole sale here.
	Shard Shard
}

// Progress is how far a running sale has got.
type Progress struct {
	// Sold is units sold (orders fulfilled) so far, of Stock.
	Sold, Stock int64
	// Done is buyers finished (orders settled) so far, of Buyers.
	Done, Buyers int
	Elapsed      time.Duration
	SalesPerSec  float64 // over the last report's interval
	// Seen is what went wrong so far, as the sale saw it; the oracles judge at the end.
	Seen Seen
	// Latency is the main latency's histogram so far, in microseconds (the purchase's,
	// or a queue's order time): the receiver's own copy.
	Latency *hdrhistogram.Histogram
	// Faults is what the faults did so far (over); Under the server faults under way,
	// with At now.
	Faults, Under []faults.Event
	// Final is set on the last report, once the buyers and workers are done.
	Final bool
}

// Oversold is how many units were sold beyond the stock so far.
func (p Progress) Oversold() int64 { return max(0, p.Sold-p.Stock) }

// Seen is what a running sale saw go wrong so far, before any oracle judged it: a live
// view's counters. The verdict at the end sorts them (an overlap is a broken lock or an
// outlived lease) and finds what cannot be seen as it happens (a lost order).
type Seen struct {
	// Overlaps counts holders who entered the critical section while another was in it.
	Overlaps int64 `json:"overlaps"`
	// Repeats counts orders a queue worker settled again after one had settled them.
	Repeats int64 `json:"repeats"`
	// Crashed counts holders and workers a fault killed holding the lock or a task.
	Crashed int64 `json:"crashed"`
	// Errors counts the errors buyers and workers met.
	Errors int64 `json:"errors"`
}

// withDefaults returns s with its zero fields set.
func (s Sale) withDefaults() Sale {
	if s.Conns == 0 {
		s.Conns = DefaultConns
	}
	if s.Prefix == "" {
		s.Prefix = DefaultPrefix
	}
	return s
}

// validate says what is wrong with s for a sale of a, in words a user can act on.
func (s Sale) validate(a faults.Applies) []error {
	var errs []error
	check := checker(&errs)
	check(s.Buyers <= 0, "buyers must be at least 1, got %d", s.Buyers)
	check(s.Stock < 0, "stock must not be negative, got %d", s.Stock)
	check(s.Conns < 0, "conns must be at least 1, got %d", s.Conns)
	check(!finite(s.Rate) || !finite(s.RampTo), "rate must be a finite number, got %g (ramp to %g)", s.Rate, s.RampTo)
	check(s.Rate < 0 || s.RampTo < 0, "rate must not be negative, got %g (ramp to %g)", s.Rate, s.RampTo)
	check(s.RampTo > 0 && s.Rate == 0, "a ramp needs a starting rate")
	check(s.Warmup < 0, "warm-up must not be negative, got %s", s.Warmup)
	check(s.KeyLease < 0, "key lease must not be negative, got %s", s.KeyLease)
	if err := s.Shard.validate(s.Buyers); err != nil {
		errs = append(errs, err)
	}
	check(s.Shard.Sharded() && !s.Faults.OnlyRates(),
		"a sharded sale takes only faults at a rate on the buyers (as client-pause:p=0.01): %s picks its victims among one process's buyers, or acts on a server", s.Faults)
	if k, ok := s.Faults.AppliesTo(a); !ok {
		check(true, "fault %s does not apply to %s (faults for %s: %s)", k, a, a, strings.Join(kindNames(faults.Kinds(a)), ", "))
	}
	return errs
}

// checker returns a check that adds an error to errs when bad holds.
func checker(errs *[]error) func(bad bool, format string, args ...any) {
	return func(bad bool, format string, args ...any) {
		if bad {
			*errs = append(*errs, fmt.Errorf(format, args...))
		}
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
