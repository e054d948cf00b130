package oracle

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Report is what the oracles found in one sale.
type Report struct {
	Buyers      int `json:"buyers"`
	Bought      int `json:"bought"`
	SoldOut     int `json:"sold_out"`
	GaveUp      int `json:"gave_up"`
	Failed      int `json:"failed"`
	Interrupted int `json:"interrupted"`
	Crashed     int `json:"crashed"`
	Rejected    int `json:"rejected"`
	// Withdrew counts holders whose lock library said, asked right before the write,
	// that they no longer held the lock: they did not write.
	Withdrew int `json:"withdrew,omitempty"`
	Pending  int `json:"pending"`

	InitialStock int64 `json:"initial_stock"`
	// FinalUnknown is set when Redis could not be read after the sale; the checks that
	// need the final state (negative stock, lost updates, order mismatch) are then skipped.
	FinalUnknown bool  `json:"final_unknown,omitempty"`
	FinalStock   int64 `json:"final_stock"`
	// OrdersRecorded is the number of orders Redis holds.
	OrdersRecorded int64 `json:"orders_recorded"`

	// Oversold is how many more orders were confirmed than there was stock.
	Oversold int64 `json:"oversold"`
	// NegativeStock is set when the counter ended below zero.
	NegativeStock bool `json:"negative_stock"`
	// LostUpdates is confirmed orders minus units taken off the counter: a positive value
	// means decrements were overwritten (two buyers wrote the same new value).
	LostUpdates int64 `json:"lost_updates"`
	// OrderMismatch is orders recorded in Redis minus orders confirmed to buyers.
	OrderMismatch int64 `json:"order_mismatch"`
	// When the order list itself was read (a merged sale), the orders compared as
	// multisets with the confirmations: MissingOrders were confirmed to a buyer and are
	// not in the list, DuplicateOrders are in it more than once, PhantomOrders are in it
	// for a buyer who was not told of a purchase.
	MissingOrders   int `json:"missing_orders,omitempty"`
	DuplicateOrders int `json:"duplicate_orders,omitempty"`
	PhantomOrders   int `json:"phantom_orders,omitempty"`

	// Overlaps counts holds that began while an earlier hold was still open.
	Overlaps int `json:"overlaps"`
	// LongestOverlap is the longest time two holds were open together; zero for a merged
	// sale, whose hosts' clocks do not compare.
	LongestOverlap time.Duration `json:"longest_overlap_ns"`
	// Witness is what the stock store saw of the holders, when they marked a witness;
	// for a merged sale Overlaps is its count.
	Witness *Witness `json:"witness,omitempty"`
	// LockBroken counts the overlaps in which both holders were surely inside their
	// leases (see [Hold.Sure]): the lock broke its promise (the server lost the key, a
	// release or a renewal touched another owner's lock, a clock jumped). The rest of
	// Overlaps are holders who outlived their lease. Zero for a merged sale.
	LockBroken int `json:"lock_broken"`
	// Word is what the lock's library told the holders who asked it, right before
	// their writes, whether they still held the lock (see [Word]).
	Word
	// Violations are the worst few overlaps with their holds, for the timelines.
	Violations []Violation `json:"violations,omitempty"`
	// Earliest is the first overlap, where the trouble began: an OVERLAP when its first
	// holder had outlived its lease, which a verdict that admits no second holder
	// assumes holders do not (results.Run.Outpaced). Nil with none, and for a merged
	// sale.
	Earliest *Violation `json:"earliest_violation,omitempty"`
	// Outlived is the first hold, by when its release began, that outlived its lease
	// (Hold.Outlived): the holder alive and at work, or its release still on its way,
	// when the lock's promise ran out. A late plain DEL then removes the next holder's
	// lock, so a LOCK-BROKEN can follow it with no overlap of its own. Nil with none,
	// and for a merged sale.
	Outlived *Hold `json:"first_outlived,omitempty"`
	// ExpiredAtRelease counts releases that found the lock already gone: a lease the
	// holder outlived, an early warning even where nothing was oversold.
	ExpiredAtRelease int `json:"expired_at_release,omitempty"`
	// Zombie is set when the lock was alive at the end though its last holder had
	// released it cleanly and no holder died with it: a release that did not delete, or
	// a renewal that outlived its unlock (class STUCK).
	Zombie bool `json:"zombie_lock,omitempty"`

	// StockGone is set when the server answered after the sale but its stock counter was
	// gone: the sale's data vanished under it (class LOST).
	StockGone bool `json:"stock_gone,omitempty"`

	// SellOut is when the counter reached zero, measured from the start; zero when it
	// never did.
	SellOut time.Duration `json:"sell_out_ns"`
	// GaveUpWithStock counts buyers who gave up before the sell-out (all who gave up when
	// there was none): contention outlasted their patience. A figure, not a finding: a
	// busy lock sells its stock all the same (see Unsold).
	GaveUpWithStock int `json:"gave_up_with_stock"`
	// Unsold is the stock left on the shelf at the end while buyers gave up: the lock
	// kept them from stock that was there for good, which is STUCK. Zero when nobody gave
	// up, or when the final state is unknown.
	Unsold int64 `json:"unsold,omitempty"`
	// LastSale is when the last confirmed purchase finished.
	LastSale time.Duration `json:"last_sale_ns"`

	// Stuck is set when a lock was left that outlives any buyer's wait: no TTL, or a TTL
	// past the horizon.
	Stuck bool `json:"stuck"`
	// LockTTL is the lock's remaining TTL at the end (negative: none).
	LockTTL time.Duration `json:"lock_ttl_ns"`
	// StaleRejected counts reads and writes the stock store refused for a stale fencing
	// token: the fence at work, not a failure.
	StaleRejected int64 `json:"stale_rejected"`
	// RenewalsAfterRelease counts watchdog renewals sent after their lease's release
	// began: a watchdog that outlives its lock.
	RenewalsAfterRelease int `json:"renewals_after_release"`

	// Schedule is what the periodic job of a scheduled drop did (see CheckSchedule); nil
	// for a sale without one. Bought is then the units it released.
	Schedule *Schedule `json:"schedule,omitempty"`
}

// Check runs every oracle over l and the final state f; f is nil when Redis could not be
// read after the sale.
func Check(l *Ledger, f *Final) Report {
	r := Report{Buyers: len(l.Entries), InitialStock: l.InitialStock, FinalUnknown: f == nil, Interrupted: l.Unstarted}
	started := l.Started()
	for i := range started {
		e := &started[i]
		switch e.Outcome {
		case Bought:
			r.Bought++
			r.LastSale = max(r.LastSale, e.Done)
			if e.Left <= 0 && (r.SellOut == 0 || e.Done < r.SellOut) {
				r.SellOut = e.Done
			}
		case SoldOut:
			r.SoldOut++
		case GaveUp:
			r.GaveUp++
		case Failed:
			r.Failed++
		case Interrupted:
			r.Interrupted++
		case Crashed:
			r.Crashed++
		case Rejected:
			r.Rejected++
		case Withdrew:
			r.Withdrew++
		default:
			r.Pending++
		}
	}
	for i := range started {
		if e := &started[i]; e.Outcome == GaveUp && (r.SellOut == 0 || e.Done < r.SellOut) {
			r.GaveUpWithStock++
		}
	}
	r.Oversold = max(0, int64(r.Bought)-l.InitialStock)
	if f != nil {
		r.FinalStock, r.OrdersRecorded, r.StockGone = f.Stock, f.Orders, f.StockGone
		if !f.StockGone {
			r.NegativeStock = f.Stock < 0
			r.LostUpdates = int64(r.Bought) - (l.InitialStock - f.Stock)
			if r.GaveUp > 0 {
				r.Unsold = max(0, f.Stock)
			}
		}
		r.OrderMismatch = f.Orders - int64(r.Bought)
		r.StaleRejected = f.StaleRejected
		r.LockTTL = f.LockTTL
		r.Stuck = f.LockTTL < 0 || f.LockTTL > f.Horizon
		r.RenewalsAfterRelease = f.RenewalsAfterRelease
		r.Witness = f.Witness
		r.Zombie = !r.Stuck && f.Errors == 0 && r.Crashed == 0 && zombie(l.Holds, f.LockTTL)
		if f.OrderIDs != nil {
			r.MissingOrders, r.DuplicateOrders, r.PhantomOrders = orderSets(l.Entries, f.OrderIDs)
		}
	}
	switch {
	case l.Hosts <= 1:
		r.Overlaps, r.LongestOverlap = overlaps(started)
		r.LockBroken, r.Violations, r.Earliest = lockOverlaps(l.Holds)
		r.Word = libraryWord(l.Holds)
		r.Outlived = firstOutlived(l.Holds)
		r.ExpiredAtRelease = expiredAtRelease(l.Holds)
	case r.Witness != nil:
		r.Overlaps = int(r.Witness.Overlaps)
	}
	return r
}

// orderSets compares the order list with the confirmations as multisets: an id is a
// buyer's index in entries.
func orderSets(entries []Entry, ids []string) (missing, duplicate, phantom int) {
	seen := make(map[int]int, len(ids))
	for _, id := range ids {
		i, err := strconv.Atoi(id)
		if err != nil || i < 0 || i >= len(entries) {
			phantom++ // no buyer of this sale
			continue
		}
		seen[i]++
	}
	for i, n := range seen {
		switch {
		case entries[i].Outcome != Bought:
			phantom += n
		case n > 1:
			duplicate += n - 1
		}
	}
	for i := range entries {
		if entries[i].Outcome == Bought && seen[i] == 0 {
			missing++
		}
	}
	return missing, duplicate, phantom
}

// overlaps sweeps the holds in order of entry, keeping the latest leave seen so far: a
// hold that enters before it overlaps at least one earlier hold.
func overlaps(entries []Entry) (count int, longest time.Duration) {
	type hold struct{ enter, leave time.Duration }
	n := 0
	for i := range entries {
		if entries[i].Held {
			n++
		}
	}
	holds := make([]hold, 0, n)
	for i := range entries {
		if e := &entries[i]; e.Held {
			holds = append(holds, hold{e.Enter, e.Leave})
		}
	}
	slices.SortFunc(holds, func(a, b hold) int { return cmp.Compare(a.enter, b.enter) })
	var open time.Duration = -1
	for i, h := range holds {
		if i > 0 && h.enter < open {
			count++
			longest = max(longest, min(h.leave, open)-h.enter)
		}
		open = max(open, h.leave)
	}
	return count, longest
}

// Findings lists what went wrong, most severe first, each as a short upper-case verdict
// with its number: "OVERSOLD 3", "LOST-UPDATE 5", "OVERLAP 12".
func (r Report) Findings() []string {
	var f []string
	if r.Oversold > 0 {
		f = append(f, fmt.Sprintf("OVERSOLD %d", r.Oversold))
	}
	f = append(f, r.Schedule.findings()...)
	if r.NegativeStock {
		f = append(f, fmt.Sprintf("NEGATIVE %d", r.FinalStock))
	}
	if r.StockGone {
		f = append(f, "STOCK-GONE")
	}
	if r.LostUpdates != 0 {
		f = append(f, fmt.Sprintf("LOST-UPDATE %d", r.LostUpdates))
	}
	if r.OrderMismatch != 0 {
		f = append(f, fmt.Sprintf("ORDERS %+d", r.OrderMismatch))
	}
	for _, o := range []struct {
		name string
		n    int
	}{{"MISSING", r.MissingOrders}, {"DUPLICATE", r.DuplicateOrders}, {"PHANTOM", r.PhantomOrders}} {
		if o.n > 0 {
			f = append(f, fmt.Sprintf("ORDERS-%s %d", o.name, o.n))
		}
	}
	if r.LockBroken > 0 {
		f = append(f, fmt.Sprintf("LOCK-BROKEN %d", r.LockBroken))
	}
	if r.ToldHeld > 0 {
		f = append(f, fmt.Sprintf("%s %d", KindToldHeld, r.ToldHeld))
	}
	if n := r.Overlaps - r.LockBroken; n > 0 {
		f = append(f, fmt.Sprintf("OVERLAP %d", n))
	}
	if r.Stuck {
		f = append(f, "STUCK")
	}
	if r.Zombie {
		f = append(f, fmt.Sprintf("ZOMBIE-LOCK %s", r.LockTTL.Round(time.Millisecond)))
	}
	if r.Unsold > 0 {
		f = append(f, fmt.Sprintf("UNSOLD %d (GAVE-UP %d)", r.Unsold, r.GaveUp))
	}
	if r.RenewalsAfterRelease > 0 {
		f = append(f, fmt.Sprintf("RENEWED-AFTER-RELEASE %d", r.RenewalsAfterRelease))
	}
	if r.ExpiredAtRelease > 0 {
		f = append(f, fmt.Sprintf("EXPIRED-AT-RELEASE %d", r.ExpiredAtRelease))
	}
	return f
}

// Cell is the verdict as a matrix cell shows it (see Verdict.Cell).
func (r Report) Cell() string { return r.Outcome().Cell() }

func abs(n int64) int64 {
	if n < 0 {
		return -n
	}
	return n
}

// Verdict is the verdict line: the findings joined, or the class alone (SAFE, or
// UNKNOWN without the final state) when nothing was found.
func (r Report) Verdict() string { return r.Outcome().String() }
