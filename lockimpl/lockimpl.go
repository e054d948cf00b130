// Package lockimpl holds the lock designs stockbench puts under load: ways to keep two buyers
// out of a flash sale's critical section, and lock-free designs that make the purchase safe
// without one.
//
// A lock design is a [Locker]: one attempt to take a lock, returning a [Lease] that is later
// released. Leases may have optional abilities, each its own interface: a fencing token
// ([Fenced]), renewals that a stop-the-world pause freezes ([Freezer], [Renewer]). A
// design whose acquire takes two commands can also show what a holder that died between
// them leaves behind ([HalfLocker]). The retry loop around a design is a value, [Retry],
// so the same design can be driven with the classic "try, sleep, give up" loop or any
// other policy. A lock-free design is a [Purchaser]: it buys one unit of a [Stock] by
// itself.
//
// Designs are looked up by name in a registry ([Lookup], [All]); users add their own with
// [Register] and run them through the same scenarios. What each built-in design is
// documented to earn, with no fault and under each, and what it is (an owner-checked
// release, renewals, its servers), is its entry in builtin.go and nowhere else:
// docs/designs.md's tables are generated from the entries, and the tests assert every
// verdict on a real Redis.
package lockimpl

import (
	"context"
	"errors"
	"time"

	"github.com/stockbench/stockbench/faults"
)

var (
	// ErrNotAcquired is returned when the lock is held by someone else, and by
	// [Retry.Acquire] when its timeout passes before the lock is free.
	ErrNotAcquired = errors.New("lockimpl: not acquired")

	// ErrAbandoned is returned by [Retry.Acquire] when its Abandon hook stops the wait.
	ErrAbandoned = errors.New("lockimpl: abandoned")

	// ErrSoldOut is returned by a [Purchaser] when no unit is left.
	ErrSoldOut = errors.New("lockimpl: sold out")

	// ErrNotHeld is returned by Release when the lock was no longer the caller's: it
	// expired, or was taken, before the release.
	ErrNotHeld = errors.New("lockimpl: not held")

	// ErrBroken is wrapped by errors of a design's own machinery, not of Redis: a process
	// adapter that exited or wrote garbage. Faults excuse Redis errors; nothing excuses
	// these, and the sale stops on the first.
	ErrBroken = errors.New("lockimpl: the design broke")

	// ErrStale is returned by the fenced stock operations when a newer fencing token has
	// already been seen: the caller's lock was lost.
	ErrStale = errors.New("lockimpl: stale fencing token")

	// ErrCannotTell is returned by a [Teller] whose library has no way to say whether
	// the lock is still held: its holder writes as one without the question does.
	ErrCannotTell = errors.New("lockimpl: the library cannot tell")
)

// Locker is a lock design. TryLock makes a single attempt to take the lock named key for
// ttl; it returns ErrNotAcquired when another holder has it.
//
// What a design does with ttl is part of the design: some round it up to whole seconds,
// and the seed port misuses it on purpose.
type Locker interface {
	TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error)
}

// Lease is a lock that TryLock granted.
type Lease interface {
	// Release gives the lock up. Designs with an owner check return ErrNotHeld when the
	// lock was lost; designs without one delete the key whoever holds it now, which is one
	// of the flaws the benchmark exists to show.
	Release(ctx context.Context) error
}

// Fenced is a lease that carries a fencing token: a number that grows with every grant,
// which the stock store checks (see [FencedRead] and [FencedWrite]) so that a holder whose
// lock was lost cannot write.
type Fenced interface {
	Lease
	Token() int64
}

// Teller is a lease whose library says, by its own documented API, whether its holder
// still holds the lock: a holder that uses the library as its docs say asks right
// before it writes, and does not write on a "no" (docs/analyses/still-held.md lists
// each library's API). StillHeld returns ErrCannotTell where the library has none; an
// error is no "yes", and the holder does not write.
type Teller interface {
	Lease
	StillHeld(ctx context.Context) (bool, error)
}

// Freezer is a lease that keeps itself alive in the background. Freeze stops that work
// until the given time, as a stop-the-world pause of the holder's process would; the zero
// time stops it for good, as the process dying would.
type Freezer interface {
	Lease
	Freeze(until time.Time)
}

// Starver is a lease whose holder's process can be starved of CPU: until the given time
// it runs only run of every period, as under a CPU quota, so what keeps the lease alive
// in the background runs late. A process adapter's process is starved itself.
type Starver interface {
	Lease
	Starve(until time.Time, run, period time.Duration)
}

// Terminator is a lease whose holder runs in a process of its own (a process adapter's),
// which can be sent what a deploy sends: SIGTERM, and SIGKILL once grace has passed.
// Terminate returns a channel closed once the process is gone.
type Terminator interface {
	Lease
	Terminate(grace time.Duration) <-chan struct{}
}

// AppPauser is a lease whose holder's application instance runs in processes of its own
// (a process adapter's pool), which can all be stopped at once until the given time, as
// a stop-the-world pause of the instance (a frozen VM or container) would; PauseApp
// returns how many it stopped.
type AppPauser interface {
	Lease
	PauseApp(until time.Time) int
}

// Renewer is a lease that renews itself; Renewals reports how many renewals it sent, and
// how many of them after its release began (a watchdog that outlives its lock).
type Renewer interface {
	Lease
	Renewals() (total, afterRelease int)
}

// Extender is a lease that renews itself and knows until when Redis promised it: the
// send of the last renewal Redis confirmed, plus the TTL that renewal set. The zero time
// means none was confirmed yet. A sale reads it to tell a lock that broke its promise
// from a holder that outlived its lease; a lease that renews without it is judged by
// its acquire alone, which can only call fewer locks broken.
type Extender interface {
	Lease
	PromisedUntil() time.Time
}

// HalfLocker is a design whose acquire takes two commands. HalfLock sends only the first,
// for key, and reports whether it succeeded: what a holder that crashed between the two
// leaves behind.
type HalfLocker interface {
	HalfLock(ctx context.Context, key string, ttl time.Duration) (bool, error)
}

// Stock names the Redis keys of one item on sale.
type Stock struct {
	// Key holds the units left, as an integer.
	Key string
	// Orders is a list with one entry (the buyer's id) per confirmed order.
	Orders string
	// Fence holds the highest fencing token the store has seen.
	Fence string
	// Stale counts the reads and writes the store refused for a stale token.
	Stale string
}

// NewStock names the keys of an item under prefix (which should hold a hash tag, so that
// the keys share a cluster slot).
func NewStock(prefix string) Stock {
	return Stock{Key: prefix + ":stock", Orders: prefix + ":orders", Fence: prefix + ":fence", Stale: prefix + ":stale"}
}

// Keys lists every key of s.
func (s Stock) Keys() []string { return []string{s.Key, s.Orders, s.Fence, s.Stale} }

// Purchaser is a lock-free design: Purchase buys one unit of s for buyer and returns the
// units left after it, or ErrSoldOut. think is the work a buyer does between reading the
// stock and writing it; designs that read and write in one step cannot include it.
type Purchaser interface {
	Purchase(ctx context.Context, s Stock, buyer string, think time.Duration) (left int64, err error)
}

// wholeSeconds rounds ttl up to whole seconds, at least one, for designs that use EX or
// EXPIRE: a 1.5s TTL must not silently become 1s.
func wholeSeconds(ttl time.Duration) time.Duration {
	s := (ttl + time.Second - 1) / time.Second
	if s < 1 {
		s = 1
	}
	return s * time.Second
}

// Starter is a design with something to start before a sale and stop after it: a pool
// of processes of another language's lock (see adapters/PROTOCOL.md). The sale calls
// Start once its keys are known, and Stop when it ends, which returns the last of what
// the design's processes logged, for the record.
type Starter interface {
	Start(ctx context.Context, s Sale) error
	Stop() (log string)
}

// Documenter is a design that says what it documents only once it runs (a process
// adapter, in its hello): a sale's record judges it by that, in place of
// Impl.Documented, once Start has returned.
type Documenter interface {
	Documented() faults.Verdicts
}

// Sale is what a Starter is told of the sale it serves.
type Sale struct {
	// Lock is the lock's key; Stock the stock's keys.
	Lock  string
	Stock Stock
	TTL   time.Duration
	// Conns is the sale's connection pool, or its buyers when fewer come, which a pool
	// of processes matches.
	Conns int
}
