// Package oracle judges a flash sale from its ledger: oversold units, lost updates,
// overlapping lock holds and buyers who gave up while stock remained.
//
// The ledger is what buyers wrote about themselves while the sale ran, one [Entry] per
// buyer, with times on the harness's single monotonic clock; [Check] reads it together
// with the final state of Redis ([Final]) and returns a [Report].
package oracle

import "time"

// Outcome is how a buyer's attempt ended.
type Outcome uint8

// The outcomes. Pending means the buyer never finished, which only an interrupted run
// leaves behind.
const (
	Pending     Outcome = iota
	Bought              // the buyer was told its order is confirmed
	SoldOut             // the buyer saw no stock left
	GaveUp              // the buyer's retry timeout passed before it got the lock
	Failed              // a Redis command failed
	Interrupted         // the run was stopped while the buyer was busy
	Crashed             // a fault stopped the buyer for good, holding what it held
	Rejected            // the stock store refused the buyer's stale fencing token
	Withdrew            // the buyer's lock library said it no longer held the lock: it did not write
)

var outcomeNames = [...]string{"pending", "bought", "sold-out", "gave-up", "failed", "interrupted", "crashed", "rejected", "withdrew"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// Entry is one buyer's record. Times are offsets from the ledger's start.
type Entry struct {
	Outcome Outcome
	// Held is true when the buyer held the lock; Enter and Leave are then the moments it
	// got the lock back from Redis and the moment it began to release it, so the recorded
	// hold lies inside the real one and an overlap seen here really happened.
	Held bool
	// Tries is how many times the buyer tried for the lock, or to buy for a design
	// without one; 0 when it never tried.
	Tries        int32
	Enter, Leave time.Duration
	// Start is when the buyer began.
	Start time.Duration
	// Done is when the buyer finished, whatever the outcome.
	Done time.Duration
	// Left is the stock the buyer's purchase left behind, as the buyer saw it; meaningful
	// when Outcome is Bought.
	Left int64
}

// Ledger is the record of one sale. Entries has one element per buyer; buyer i writes only
// Entries[i], so recording takes no lock and no allocation.
type Ledger struct {
	InitialStock int64
	Entries      []Entry
	// Unstarted is how many buyers, the last ones, never started because the sale was
	// stopped first. Their entries are left as they were: marking a million of them
	// would cost a stopped run seconds of page faults.
	Unstarted int
	// Hosts is how many clocks the times were read from: above 1 for a sale merged from
	// shards, whose monotonic clocks share only a start read from Redis, so holds on
	// different hosts cannot be compared for overlap (the witness counts those).
	// Default: 0, one clock.
	Hosts int
	// Holds is every hold of the lock in detail, in no order, for the lease-aware checks
	// and the violations' timelines; empty for a design without a lock and for a merged
	// sale, whose clocks do not compare.
	Holds []Hold
}

// Started is the entries of the buyers who started.
func (l *Ledger) Started() []Entry { return l.Entries[:len(l.Entries)-l.Unstarted] }

// NewLedger returns a ledger for buyers buyers.
func NewLedger(buyers int, initialStock int64) *Ledger {
	return &Ledger{InitialStock: initialStock, Entries: make([]Entry, buyers)}
}

// Final is the state of Redis after the sale.
type Final struct {
	// Stock is the stock counter's final value.
	Stock int64
	// StockGone is set when the server answered but held no stock counter: the sale's
	// data vanished (a failover or restart lost the key), which is a finding, not an
	// unreadable state. Stock is then meaningless.
	StockGone bool
	// Orders is the number of orders recorded in Redis.
	Orders int64
	// StaleRejected is how many reads and writes the stock store refused for a stale
	// fencing token.
	StaleRejected int64
	// LockTTL is the lock's remaining time to live once every buyer was done: zero when
	// no lock was left, negative when one was left that never expires.
	LockTTL time.Duration
	// Horizon is how long a buyer waits for the lock; a lock left for longer is stuck.
	Horizon time.Duration
	// RenewalsAfterRelease counts lease renewals sent after the lease's release began.
	RenewalsAfterRelease int
	// Errors is how many errors buyers met: a lock left alive at the end may then be
	// one whose acquire's reply was lost, so it is no evidence of a zombie.
	Errors int
	// Witness is what the stock store saw of the holders, when they marked a witness.
	Witness *Witness
	// OrderIDs, when read, is the order list itself (the buyers' indices, as the ledger
	// numbers them), for the orders oracle to compare as multisets.
	OrderIDs []string
}

// Witness is what the stock store itself saw of the lock holders: each holder counts
// itself in on entering the critical section and out on leaving it. Two holders on
// different hosts cannot compare their clocks, but the store sees both.
type Witness struct {
	// Max is the most holders inside at once: above 1 is an overlap.
	Max int64 `json:"max"`
	// Overlaps counts holders who came in while another was inside.
	Overlaps int64 `json:"overlaps"`
}
