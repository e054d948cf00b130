// Package scenarios runs the workloads stockbench measures. The flash sale: buyers race
// through a lock design for a stock counter over a bounded connection pool; each buys at
// most once, and the sale records what each one saw.
//
// A buyer of a lock design is a goroutine, started at once (closed load) or at its
// arrival time (open load): it waits on the lock, sleeps between tries and may be paused
// or killed by a fault, and a goroutine keeps that straight-line code. Its Redis calls
// run on an executor of one goroutine per connection, and the buyer waits for them on a
// channel: a goroutine parked inside go-redis's pool queue kept about 8 KB of stack, one
// parked on the executor's queue stays within the 2 KB it started with. The price is
// about 4.5 KB per waiting buyer, where a state machine would need a few hundred bytes;
// 200,000 waiting buyers take about 0.9 GB.
//
// A buyer of a design whose purchase is one call (lua) has nothing to wait for but a
// connection, so it is a state machine of one step: an index that one worker per
// connection takes in turn (see feed). It costs a ledger entry and no goroutine (a million buyers take
// about 170 MB), and no hand-over between goroutines, which is what lets the lua sale
// keep pace with redis-benchmark.
package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
)

// Critical is what a lock holder does while it holds the lock.
type Critical string

// The critical sections.
const (
	// ReadThinkWrite reads the stock (GET), works for the think time, then writes
	// stock-1 (SET) and records the order: a lost lock becomes a lost update, and a lost
	// update becomes an oversell.
	ReadThinkWrite Critical = "read-think-write"
	// Atomic checks, decrements and records in one Lua script: a lost lock costs nothing.
	Atomic Critical = "atomic"
)

// Defaults for FlashSale's zero fields.
const (
	DefaultTTL   = 2 * time.Second
	DefaultConns = 64
)

// FlashSale describes one sale. Buyers must be set; zero fields take the defaults named
// in their comments.
type FlashSale struct {
	// Name labels the sale in results (a preset's name).
	Name string
	// Buyers is the number of buyers, each trying to buy once.
	Buyers int
	// Stock is the number of units on sale.
	Stock int64
	// Critical is what a lock holder does. Default: ReadThinkWrite. Lock-free designs
	// ignore it and Think.
	Critical Critical
	// Think is the holder's work between read and write. Default: none.
	Think Think
	// TTL is the lock's time to live. Default: DefaultTTL.
	TTL time.Duration
	// Retry is the buyers' acquire loop. Its Abandon hook is set by the sale: between
	// tries a buyer reads the stock and leaves once it is gone. Default: lockimpl's.
	Retry lockimpl.Retry
	// Conns is the connection pool the sale is meant to run over; the caller builds the
	// client with it. Default: DefaultConns.
	Conns int
	// Seed makes think-time draws repeatable.
	Seed uint64
	// Prefix is put before every key the sale touches. It should hold a hash tag, as in
	// the default, so that the keys share a cluster slot; give each concurrent sale its own.
	// Default: DefaultPrefix.
	Prefix string
	// Faults is what goes wrong during the sale. Default: nothing.
	Faults faults.Plan
	// CheckLinearizable runs porcupine over the confirmed purchases. Default: off.
	CheckLinearizable bool
	// Rate, when set, makes the load open: buyers arrive at Rate a second (rising or
	// falling linearly to RampTo by the last buyer, when RampTo is set) whether or not
	// earlier ones are done, and each buyer's latencies count from its intended arrival,
	// so a stall shows in them instead of slowing the arrivals (no coordinated omission).
	// Default: 0, every buyer at once (the closed model).
	Rate, RampTo float64
	// Warmup leaves the buyers who arrive in the sale's first Warmup out of the latency
	// figures; the ledger and the oracles still count them. Default: none.
	Warmup time.Duration
	// Progress, when set, is called about once a second while the sale runs, from a
	// goroutine of its own. Default: nil.
	Progress func(Progress)
	// KeyLease, when set, keeps a TTL of KeyLease on the sale's keys while it runs,
	// renewed four times a second, so that the keys of a run killed before its clean-up expire
	// on their own: for a user's own Redis (DefaultKeyLease). A lock keeps the TTL its
	// design gives it, up to KeyLease; one left with none gets KeyLease once it is stuck.
	// Default: none, for servers the harness throws away.
	KeyLease time.Duration
}

// Progress is how far a running sale has got.
type Progress struct {
	Sold, Stock  int64
	Done, Buyers int
	Elapsed      time.Duration
	SalesPerSec  float64 // over the last report's interval
}

// DefaultPrefix is the key prefix of a sale that names none.
const DefaultPrefix = "{stockbench}"

// WithDefaults returns s with its zero fields set to the defaults.
func (s FlashSale) WithDefaults() FlashSale {
	if s.Critical == "" {
		s.Critical = ReadThinkWrite
	}
	if s.Think.kind == "" {
		s.Think = Fixed(0)
	}
	if s.TTL == 0 {
		s.TTL = DefaultTTL
	}
	if s.Retry.Interval == 0 {
		s.Retry.Interval = lockimpl.DefaultRetryInterval
	}
	if s.Retry.Timeout == 0 {
		s.Retry.Timeout = lockimpl.DefaultRetryTimeout
	}
	if s.Conns == 0 {
		s.Conns = DefaultConns
	}
	if s.Prefix == "" {
		s.Prefix = DefaultPrefix
	}
	return s
}

// Validate says what is wrong with s, in words a command-line user can act on.
func (s FlashSale) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(s.Buyers <= 0, "buyers must be at least 1, got %d", s.Buyers)
	check(s.Stock < 0, "stock must not be negative, got %d", s.Stock)
	check(s.Critical != "" && s.Critical != ReadThinkWrite && s.Critical != Atomic,
		"unknown critical section %q (known: %s, %s)", s.Critical, ReadThinkWrite, Atomic)
	check(s.TTL < 0, "ttl must be positive, got %s", s.TTL)
	check(s.Retry.Interval < 0, "retry interval must be positive, got %s", s.Retry.Interval)
	check(s.Retry.Timeout < 0, "timeout must be positive, got %s", s.Retry.Timeout)
	check(s.Conns < 0, "conns must be at least 1, got %d", s.Conns)
	check(!finite(s.Rate) || !finite(s.RampTo), "rate must be a finite number, got %g (ramp to %g)", s.Rate, s.RampTo)
	check(s.Rate < 0 || s.RampTo < 0, "rate must not be negative, got %g (ramp to %g)", s.Rate, s.RampTo)
	check(s.RampTo > 0 && s.Rate == 0, "a ramp needs a starting rate")
	check(s.Warmup < 0, "warm-up must not be negative, got %s", s.Warmup)
	check(s.KeyLease < 0, "key lease must not be negative, got %s", s.KeyLease)
	if k, ok := s.Faults.ForLocks(); !ok {
		check(true, "fault %s applies to queues, not locks", k)
	}
	return errors.Join(errs...)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// keys are the sale's Redis keys.
func (s FlashSale) keys() (stock lockimpl.Stock, lock string) {
	return lockimpl.NewStock(s.Prefix), s.Prefix + ":lock"
}

// lockKeys are the keys the sale writes on each lock server.
func (s FlashSale) lockKeys() []string {
	_, lock := s.keys()
	return []string{lock, lock + ":counter"}
}

// leases are the sale's keys by server, for KeyLease.
func (s FlashSale) leases(r Redis) []leased {
	stock, lock := s.keys()
	sets := []leased{{c: r.StockAdmin, data: stock.Keys()}}
	for _, c := range r.LockAdmins {
		sets = append(sets, leased{c: c, data: []string{lock + ":counter"}, locks: []string{lock}})
	}
	return sets
}

// setUp writes the stock and clears what an earlier sale with the same prefix left.
func (s FlashSale) setUp(ctx context.Context, r Redis) error {
	stock, _ := s.keys()
	if err := r.StockAdmin.Del(ctx, stock.Keys()...).Err(); err != nil {
		return fmt.Errorf("flash-sale: set up: del: %w", err)
	}
	for _, c := range r.LockAdmins {
		if err := c.Del(ctx, s.lockKeys()...).Err(); err != nil {
			return fmt.Errorf("flash-sale: set up: del lock: %w", err)
		}
	}
	if err := r.StockAdmin.Set(ctx, stock.Key, s.Stock, s.KeyLease).Err(); err != nil {
		return fmt.Errorf("flash-sale: set up: set stock: %w", err)
	}
	return nil
}

// cleanUp deletes every key the sale wrote.
func (s FlashSale) cleanUp(ctx context.Context, r Redis) error {
	stock, _ := s.keys()
	errs := []error{r.StockAdmin.Del(ctx, stock.Keys()...).Err()}
	for _, c := range r.LockAdmins {
		errs = append(errs, c.Del(ctx, s.lockKeys()...).Err())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("flash-sale: clean up: %w", err)
	}
	return nil
}
