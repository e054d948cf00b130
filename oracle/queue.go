package oracle

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// TakeResult is what a worker made of a task it took.
type TakeResult uint8

// The results of a take.
const (
	TakeFailed    TakeResult = iota // a Redis command failed
	TakeFulfilled                   // the order's effect was applied
	TakeRefused                     // no stock was left for it
	TakeRepeat                      // an idempotent fulfil found it done already
	TakeCrashed                     // a fault stopped the worker holding it
)

// Enqueued is one buyer's order, as the buyer saw it.
type Enqueued struct {
	ID string
	// Accepted is set when the enqueue succeeded.
	Accepted bool
	// InDoubt is set when the enqueue failed in a way that leaves it unknown whether
	// Redis took it: the connection broke or timed out after the command went out (a
	// server killed between persisting the write and replying). Such an order may be
	// applied, and that is no phantom.
	InDoubt bool
	// Done is when the enqueue returned.
	Done time.Duration
}

// Take is one delivery of a task to a worker.
type Take struct {
	ID  string
	Seq int64
	// Begin and End bound the dequeue call that delivered it.
	Begin, End time.Duration
	// Fulfilled is when the fulfil returned.
	Fulfilled time.Duration
	Result    TakeResult
}

// QueueLedger is what a queue sale's buyers and workers recorded.
type QueueLedger struct {
	InitialStock int64
	Orders       []Enqueued
	Takes        []Take
	// Lease is how long a delivery is its worker's alone (the visibility timeout) unless
	// acknowledged sooner; zero leaves the lease check out.
	Lease time.Duration
	// DoubtfulTakes are when dequeues failed without an answer (the connection broke
	// after the command went out): Redis may have handed a task out that no worker saw,
	// to be redelivered later, which then looks like a first delivery out of order.
	DoubtfulTakes []time.Duration
}

// QueueFinal is the state of Redis after a queue sale.
type QueueFinal struct {
	Stock int64
	// Effects lists the order ids whose effect was applied, once per application.
	Effects []string
	// Refused lists the order ids refused for want of stock, once per refusal.
	Refused []string
}

// QueueReport is what the oracles found in a queue sale.
type QueueReport struct {
	Buyers   int `json:"buyers"`
	Accepted int `json:"accepted"`
	// Fulfilled and Refused count distinct orders.
	Fulfilled int `json:"fulfilled"`
	Refused   int `json:"refused"`
	// Lost counts accepted orders neither fulfilled nor refused; LostIDs names a few.
	Lost    int      `json:"lost"`
	LostIDs []string `json:"lost_ids,omitempty"`
	// Phantom counts effects of orders nobody placed: no buyer saw them accepted, nor
	// sent them without hearing back. An order applied more often than it was placed
	// (zero times), so class DUPLICATED, not LOST.
	Phantom int `json:"phantom"`
	// InDoubtApplied counts orders applied whose enqueue failed without an answer
	// (Enqueued.InDoubt): Redis took them but the reply was lost. What a server killed
	// between its write and its reply does; a finding to read, not a failure.
	InDoubtApplied int `json:"in_doubt_applied,omitempty"`
	// DuplicatedEffects counts applications beyond one per order, refusals included.
	DuplicatedEffects int `json:"duplicated_effects"`
	// OutlivedDuplicates are those of DuplicatedEffects whose task's first worker, alive,
	// acked only past its visibility timeout, and was not delivered again under it: the
	// worker outlived its lease, as a paused one does; no lease was broken.
	OutlivedDuplicates int `json:"outlived_duplicates,omitempty"`
	// Deliveries counts takes; Redeliveries those of a task taken before.
	Deliveries   int `json:"deliveries"`
	Redeliveries int `json:"redeliveries"`
	// OutOfOrder counts first deliveries handed out after a take that began later and
	// got a task from behind them, where the design promises an order. A delivery after
	// a dequeue that failed without an answer (QueueLedger.DoubtfulTakes) of a task
	// already queued then may be a redelivery of what that dequeue took unseen: it is
	// counted in InDoubtTaken instead.
	OutOfOrder int `json:"out_of_order"`
	// InDoubtTaken counts the deliveries out of order that may have been redeliveries of
	// a task a failed dequeue took unseen. A finding to read, not a failure.
	InDoubtTaken int `json:"in_doubt_taken,omitempty"`
	Crashed      int `json:"crashed"`
	// LeaseOverlaps counts deliveries of a task while an earlier delivery of it was still
	// leased (QueueLedger.Lease): what a lease queue promises never to do. A finding, not
	// a class: its damage, if any, shows as DUPLICATED.
	LeaseOverlaps int `json:"lease_overlaps,omitempty"`
	// Tasks are the worst few tasks mishandled, with their deliveries, for the timelines.
	Tasks []TaskViolation `json:"task_violations,omitempty"`

	InitialStock int64 `json:"initial_stock"`
	// FinalUnknown is set when Redis could not be read after the sale: what was applied,
	// refused or lost is then not known, and only what the workers' own ledger shows
	// (the order of deliveries) is judged.
	FinalUnknown  bool  `json:"final_unknown,omitempty"`
	FinalStock    int64 `json:"final_stock"`
	Oversold      int64 `json:"oversold"`
	NegativeStock bool  `json:"negative_stock"`
}

// CheckQueue runs the queue oracles over l and f; f is nil when Redis could not be read
// after the sale. ordered says whether the design promises to hand tasks out in Seq
// order.
func CheckQueue(l *QueueLedger, f *QueueFinal, ordered bool) QueueReport {
	r := QueueReport{Buyers: len(l.Orders), Deliveries: len(l.Takes), InitialStock: l.InitialStock, FinalUnknown: f == nil}
	for _, o := range l.Orders {
		if o.Accepted {
			r.Accepted++
		}
	}
	r.Crashed, r.Redeliveries, r.OutOfOrder, r.InDoubtTaken = deliveries(l, ordered)
	tasks := byTask(l.Takes) // each task's deliveries in order, read by the checks below
	r.LeaseOverlaps = leaseOverlaps(tasks, l.Lease)
	if f != nil {
		r.countEffects(l, f, tasks)
	}
	return r
}

// countEffects compares the orders accepted with the effects and refusals Redis logged.
func (r *QueueReport) countEffects(l *QueueLedger, f *QueueFinal, tasks map[string][]Take) {
	r.FinalStock = f.Stock
	accepted := make(map[string]bool, len(l.Orders))
	inDoubt := make(map[string]bool)
	for _, o := range l.Orders {
		switch {
		case o.Accepted:
			accepted[o.ID] = true
		case o.InDoubt:
			inDoubt[o.ID] = true
		}
	}
	done := make(map[string]int)
	for _, ids := range [][]string{f.Effects, f.Refused} {
		for _, id := range ids {
			done[id]++
			switch {
			case accepted[id]:
			case inDoubt[id]:
				if done[id] == 1 {
					r.InDoubtApplied++
				}
			default:
				r.Phantom++
			}
		}
	}
	r.Fulfilled, r.Refused = distinct(f.Effects), distinct(f.Refused)
	for id, n := range done {
		r.DuplicatedEffects += n - 1
		if n > 1 && outlivedLease(tasks[id], l.Lease) {
			r.OutlivedDuplicates += n - 1
		}
	}
	for _, o := range l.Orders {
		if o.Accepted && done[o.ID] == 0 {
			r.Lost++
			if len(r.LostIDs) < 10 {
				r.LostIDs = append(r.LostIDs, o.ID)
			}
		}
	}
	r.Oversold = max(0, int64(r.Fulfilled)-l.InitialStock)
	r.NegativeStock = f.Stock < 0
	r.Tasks = taskViolations(l, f, accepted, tasks)
}

// deliveries reads the workers' takes alone: how many crashed, how many were
// redeliveries, and, for a design that promises an order, how many first deliveries
// came out of it.
func deliveries(l *QueueLedger, ordered bool) (crashed, redelivered, outOfOrderN, inDoubt int) {
	takes := slices.Clone(l.Takes)
	slices.SortStableFunc(takes, func(a, b Take) int { return cmp.Compare(a.Begin, b.Begin) })
	seen := make(map[string]bool, len(takes))
	var first []Take
	for _, t := range takes {
		if t.Result == TakeCrashed {
			crashed++
		}
		if seen[t.ID] {
			redelivered++
			continue
		}
		seen[t.ID] = true
		first = append(first, t)
	}
	if ordered {
		outOfOrderN, inDoubt = outOfOrder(first, l.Orders, l.DoubtfulTakes)
	}
	return crashed, redelivered, outOfOrderN, inDoubt
}

// leaseOverlaps counts deliveries of a task made while an earlier delivery of it was
// surely still leased: before that delivery's lease could have expired (its dequeue
// began a lease earlier at the soonest), and before its worker acked it (a worker that
// crashed never did). Bounds are taken on the safe side, so a count is never a clock's
// doing.
func leaseOverlaps(tasks map[string][]Take, lease time.Duration) int {
	n := 0
	for _, takes := range tasks {
		for j := range takes {
			if underLease(takes, j, lease) {
				n++
			}
		}
	}
	return n
}

// underLease reports whether delivery j of a task (its takes in order) came while an
// earlier one was surely still leased.
func underLease(takes []Take, j int, lease time.Duration) bool {
	if lease <= 0 {
		return false
	}
	b := takes[j]
	for _, a := range takes[:j] {
		// Redis stamps a delivery in whole milliseconds of its own clock, so a claim by
		// idle time may answer up to a millisecond before Begin+lease (CI once counted
		// a stream's reclaim at its visibility timeout as under the lease): the margin
		// a lock's hold has.
		held := a.Begin + lease - leaseMargin(lease)
		if a.Result != TakeCrashed && a.Fulfilled > 0 {
			held = min(held, a.Fulfilled)
		}
		if b.End < held {
			return true
		}
	}
	return false
}

// outlivedLease reports whether a task's first delivery (its takes in order) went to a
// live worker that acked only after its lease had surely run out (the lease began by
// the dequeue's return at the latest), and the redelivery did not come under that
// lease: the worker outlived its lease, rather than the lease breaking, an acked task
// coming back or a dead worker's task coming back. A task the queue hands on once its
// lease runs out is taken again when a worker is free, which may be after the first
// worker's late ack.
func outlivedLease(takes []Take, lease time.Duration) bool {
	if lease <= 0 || len(takes) < 2 {
		return false
	}
	a := takes[0]
	return a.Result != TakeCrashed && a.Fulfilled >= a.End+lease+leaseMargin(lease) && !underLease(takes, 1, lease)
}

// Recoveries are, for each delivery that ended with its worker dead holding the task,
// how long until the task was delivered again (the death to the next dequeue's return);
// lost counts the deaths after which it never was.
func Recoveries(l *QueueLedger) (after []time.Duration, lost int) {
	for _, takes := range byTask(l.Takes) {
		for j, a := range takes {
			if a.Result != TakeCrashed {
				continue
			}
			if j+1 < len(takes) {
				after = append(after, max(takes[j+1].End-a.End, 0))
			} else {
				lost++
			}
		}
	}
	return after, lost
}

// byTask groups takes by task, each task's in the order they began.
func byTask(takes []Take) map[string][]Take {
	m := make(map[string][]Take)
	for _, t := range takes {
		m[t.ID] = append(m[t.ID], t)
	}
	for _, ts := range m {
		slices.SortFunc(ts, func(a, b Take) int { return cmp.Compare(a.Begin, b.Begin) })
	}
	return m
}

func distinct(ids []string) int {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return len(set)
}

// outOfOrder counts first deliveries b for which an earlier, finished take a returned a
// task behind b although b had been enqueued before a began: the queue skipped b. takes
// are in order of Begin.
func outOfOrder(takes []Take, orders []Enqueued, doubtful []time.Duration) (n, inDoubt int) {
	enqueued := make(map[string]time.Duration, len(orders))
	for _, o := range orders {
		enqueued[o.ID] = o.Done
	}
	for j, b := range takes {
		for _, a := range takes[:j] {
			if a.End < b.Begin && b.Seq < a.Seq && enqueued[b.ID] < a.Begin {
				if slices.ContainsFunc(doubtful, func(d time.Duration) bool { return enqueued[b.ID] < d && d < b.Begin }) {
					inDoubt++
				} else {
					n++
				}
				break
			}
		}
	}
	return n, inDoubt
}

// Class is the most severe kind of finding.
func (r QueueReport) Class() Class {
	switch {
	case r.Oversold > 0 || r.NegativeStock:
		return ClassOversold
	case r.Lost > 0:
		return ClassLost
	case r.DuplicatedEffects > 0 || r.Phantom > 0:
		return ClassDuplicated
	case r.OutOfOrder > 0:
		return ClassReordered
	case r.FinalUnknown:
		return ClassUnknown
	}
	return ClassSafe
}

// Cell is the class with its number, as a matrix cell shows it.
func (r QueueReport) Cell() string { return r.Outcome().Cell() }

// Findings lists what went wrong, most severe first.
func (r QueueReport) Findings() []string {
	f := []string{}
	add := func(cond bool, format string, args ...any) {
		if cond {
			f = append(f, fmt.Sprintf(format, args...))
		}
	}
	add(r.Oversold > 0, "OVERSOLD %d", r.Oversold)
	add(r.NegativeStock, "NEGATIVE %d", r.FinalStock)
	add(r.Lost > 0, "LOST %d", r.Lost)
	add(r.Phantom > 0, "PHANTOM %d", r.Phantom)
	add(r.DuplicatedEffects > 0, "DUPLICATED %d", r.DuplicatedEffects)
	add(r.OutOfOrder > 0, "REORDERED %d", r.OutOfOrder)
	add(r.LeaseOverlaps > 0, "LEASE-OVERLAP %d", r.LeaseOverlaps)
	add(r.InDoubtApplied > 0, "IN-DOUBT-APPLIED %d", r.InDoubtApplied)
	add(r.InDoubtTaken > 0, "IN-DOUBT-TAKEN %d", r.InDoubtTaken)
	return f
}

// Verdict is the findings joined, or the class alone (SAFE, or UNKNOWN when the final
// state could not be read) when nothing was found.
func (r QueueReport) Verdict() string { return r.Outcome().String() }

// TaskViolation is one task the queue mishandled, with every delivery of it, for the
// timelines: DUPLICATED (its order applied more than once), LOST (accepted, taken, and
// never applied nor refused) or a delivery under a live lease (class "", the finding
// LEASE-OVERLAP).
type TaskViolation struct {
	Class Class  `json:"class"`
	Task  string `json:"task"`
	// Applied is how often its order was applied or refused.
	Applied int    `json:"applied"`
	Takes   []Take `json:"takes"`
}

// taskViolations picks the worst few tasks: duplicated ones first, then lost ones that
// a worker had taken, then deliveries under a live lease.
func taskViolations(l *QueueLedger, f *QueueFinal, accepted map[string]bool, tasks map[string][]Take) []TaskViolation {
	if f == nil {
		return nil
	}
	done := make(map[string]int)
	for _, ids := range [][]string{f.Effects, f.Refused} {
		for _, id := range ids {
			done[id]++
		}
	}
	var out []TaskViolation
	ids := slices.Sorted(maps.Keys(tasks))
	for _, pass := range []func(id string, takes []Take) Class{
		func(id string, _ []Take) Class { return pick(done[id] > 1, ClassDuplicated) },
		func(id string, _ []Take) Class { return pick(accepted[id] && done[id] == 0, ClassLost) },
		func(_ string, takes []Take) Class { return pick(leased(takes, l.Lease), "") },
	} {
		for _, id := range ids {
			if len(out) == maxViolations {
				return out
			}
			if slices.ContainsFunc(out, func(v TaskViolation) bool { return v.Task == id }) {
				continue
			}
			if c := pass(id, tasks[id]); c != noClass {
				out = append(out, TaskViolation{Class: c, Task: id, Applied: done[id], Takes: tasks[id]})
			}
		}
	}
	return out
}

// noClass marks a task a pass does not pick.
const noClass Class = "-"

func pick(ok bool, c Class) Class {
	if ok {
		return c
	}
	return noClass
}

// leased reports whether any delivery of a task came under a live lease.
func leased(takes []Take, lease time.Duration) bool {
	for j := range takes {
		if underLease(takes, j, lease) {
			return true
		}
	}
	return false
}
