package scenarios

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
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

// DefaultTTL is the lock's time to live in a FlashSale that sets none.
const DefaultTTL = 2 * time.Second

// FlashSale is a sale through a lock design: buyers race through the lock for a stock
// counter over a bounded connection pool; each buys at most once, and the sale records
// what each one saw. Buyers must be set; zero fields take the defaults named in their
// comments.
type FlashSale struct {
	Sale
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
	// Apps is how many application instances the buyers come through, buyer i through
	// instance i mod Apps, each with its own pool of Conns connections and its own copy of
	// the design, as an application is deployed. Default: 1, or 2 under a fault that
	// strikes one instance while the others go on (faults.Needs.PerApp).
	Apps int
	// Serve, when set, is how many buyers each application instance serves at once (its
	// worker processes, as PHP-FPM's, or a limit on concurrent requests); the others wait
	// in the instance's queue without touching Redis, until a place frees or their retry
	// timeout, counted from their arrival, passes. Default: 0, no limit: every buyer
	// polls at once, as goroutines sharing the instance's pool.
	Serve int
	// CheckLinearizable runs porcupine over the confirmed purchases. Default: off.
	CheckLinearizable bool
	// Witness has every lock holder count itself in and out at the stock store (see
	// oracle.Witness): two round trips more per hold, for overlaps judged by the store
	// rather than by one host's clock. Default: off, and always on in a shard.
	Witness bool
	// Drop, when its Waves are set, makes the sale a scheduled drop (see Drop): Buyers
	// are then scheduler instances and the lock design is their scheduler lock. Default:
	// none, a sale of buyers.
	Drop Drop
}

// WithDefaults returns s with its zero fields set to the defaults.
func (s FlashSale) WithDefaults() FlashSale {
	s.Sale = s.Sale.withDefaults()
	if s.Critical == "" {
		s.Critical = ReadThinkWrite
	}
	if s.Think.IsZero() {
		s.Think = Fixed(0)
	}
	if s.Apps == 0 {
		s.Apps = s.defaultApps()
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
	if s.Drop.On() && s.Drop.Every == 0 {
		s.Drop.Every = DefaultDropEvery
	}
	return s
}

// defaultApps is how many application instances s has when its Apps is not set: one,
// or two under a fault that strikes one while the others go on.
func (s FlashSale) defaultApps() int {
	if _, perApp := s.Faults.PerApp(); perApp {
		return 2
	}
	return 1
}

// Validate says what is wrong with s, in words a user can act on.
func (s FlashSale) Validate() error {
	errs := s.Sale.validate(faults.Locks)
	check := checker(&errs)
	check(s.Critical != "" && s.Critical != ReadThinkWrite && s.Critical != Atomic,
		"unknown critical section %q (known: %s, %s)", s.Critical, ReadThinkWrite, Atomic)
	check(s.Apps < 0, "apps must be at least 1, got %d", s.Apps)
	k, perApp := s.Faults.PerApp()
	check(perApp && s.Apps == 1, "%s strikes one application instance while the others go on: it needs --apps 2 or more, got 1", k)
	check(s.Serve < 0, "serve must not be negative, got %d", s.Serve)
	check(s.TTL < 0, "ttl must be positive, got %s", s.TTL)
	check(s.Retry.Interval < 0, "retry interval must be positive, got %s", s.Retry.Interval)
	check(s.Retry.Timeout < 0, "timeout must be positive, got %s", s.Retry.Timeout)
	check(s.Shard.Sharded() && s.CheckLinearizable, "a shard cannot check linearizability: its hosts' clocks do not compare")
	errs = append(errs, s.Drop.validate(s)...)
	return errors.Join(errs...)
}

// Takes says why impl cannot run the sale, or nil when it can: a scheduled drop needs a
// lock design, for its schedulers' lock.
func (s FlashSale) Takes(impl lockimpl.Impl) error {
	if s.Drop.On() && impl.NewLocker == nil {
		return fmt.Errorf("%s left out of %s: it is lock-free, and a scheduled drop runs its schedulers under a lock design", impl.Name, cmp.Or(s.Name, "the drop"))
	}
	if k := s.Faults.Servers(); k > impl.LockNodes() {
		return fmt.Errorf("fault %s strikes %d lock servers at once; %s runs over %d (--adapter-nodes gives an adapter that supports nodes more)", s.Faults, k, impl.Name, impl.LockNodes())
	}
	return nil
}

// Run runs the sale on r with impl, which need not be registered, and returns its
// record. It touches only keys under s.Prefix and deletes them at the end.
//
// When ctx ends early the buyers stop, the record is marked incomplete and Run still
// returns it with what was measured; an error is returned only when the sale could not
// start, or together with an incomplete record when Redis failed under it.
func (s FlashSale) Run(ctx context.Context, r Redis, impl lockimpl.Impl) (results.Run, error) {
	run, _, err := s.run(ctx, r, impl)
	return run, err
}

// RunPart runs the sale as Run does and returns, besides the record, what a merge of a
// sharded sale's shards needs of it (see Merge).
func (s FlashSale) RunPart(ctx context.Context, r Redis, impl lockimpl.Impl) (results.Part, error) {
	run, ls, err := s.run(ctx, r, impl)
	p := results.Part{Run: run}
	if ls != nil {
		p.Entries, p.Unstarted, p.Final = ls.ledger.Entries, ls.ledger.Unstarted, ls.final
	}
	return p, err
}

func (s FlashSale) run(ctx context.Context, r Redis, impl lockimpl.Impl) (run results.Run, ls *lockSale, err error) {
	if err := s.Validate(); err != nil {
		return results.Run{}, nil, err
	}
	if err := admit(impl.Name, impl.Validate(), impl.Outside, s.Faults); err != nil {
		return results.Run{}, nil, err
	}
	if err := s.Takes(impl); err != nil {
		return results.Run{}, nil, err
	}
	s, r = s.WithDefaults(), r.withDefaults()
	if err := r.check(impl.LockNodes(), impl.Name); err != nil {
		return results.Run{}, nil, err
	}
	apps, opened, err := appClients(r, s.Apps)
	if err != nil {
		return results.Run{}, nil, err
	}
	defer closeClients(opened)
	run, err = runSale(ctx, s.Sale, r, s.TTL, func(inj *faults.Injector) kind {
		ls = newLockSale(s, r, apps, impl, inj)
		if s.Drop.On() {
			return newDropSale(ls)
		}
		return ls
	})
	return run, ls, err
}

// keys are the sale's Redis keys.
func (s FlashSale) keys() (stock lockimpl.Stock, lock string) {
	return lockimpl.NewStock(s.Prefix), s.Prefix + ":lock"
}

// lockKeys are the keys the sale writes on each lock server.
func (s FlashSale) lockKeys() []string {
	_, lock := s.keys()
	return []string{lock, lock + ":counter"}
}
