package oracle

import (
	"testing"
	"time"
)

// orders are accepted orders "0".."n-1", enqueued at 0.
func orders(n int) []Enqueued {
	o := make([]Enqueued, n)
	for i := range o {
		o[i] = Enqueued{ID: itoa(i), Accepted: true}
	}
	return o
}

func itoa(i int) string { return string(rune('0' + i)) }

// take is a delivery of order id with seq, its dequeue over [begin, end] ms.
func take(id string, seq, begin, end int64) Take {
	return Take{ID: id, Seq: seq, Begin: time.Duration(begin) * time.Millisecond, End: time.Duration(end) * time.Millisecond, Result: TakeFulfilled}
}

func TestCheckQueue(t *testing.T) {
	tests := []struct {
		name    string
		l       *QueueLedger
		f       *QueueFinal
		ordered bool
		cell    string
		check   func(r QueueReport) bool
	}{
		{
			// Every order fulfilled once, in order.
			name: "clean", ordered: true,
			l: &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("1", 1, 2, 3), take("2", 2, 4, 5)}},
			f: &QueueFinal{Stock: 0, Effects: []string{"0", "1", "2"}}, cell: "SAFE",
			check: func(r QueueReport) bool { return r.Fulfilled == 3 && r.Lost == 0 },
		},
		{
			// Order 1 was taken by a worker that died: lost, exactly one.
			name: "lost",
			l:    &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), {ID: "1", Result: TakeCrashed}, take("2", 2, 4, 5)}},
			f:    &QueueFinal{Stock: 1, Effects: []string{"0", "2"}}, cell: "LOST 1",
			check: func(r QueueReport) bool { return r.Lost == 1 && r.LostIDs[0] == "1" && r.Crashed == 1 },
		},
		{
			// Order 1 delivered twice and applied twice; a refusal counts as settled.
			name: "duplicated",
			l:    &QueueLedger{InitialStock: 2, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("1", 1, 2, 3), take("1", 1, 6, 7), take("2", 2, 8, 9)}},
			f:    &QueueFinal{Stock: 0, Effects: []string{"0", "1", "1"}, Refused: []string{"2"}}, cell: "DUPLICATED 1",
			check: func(r QueueReport) bool { return r.Redeliveries == 1 && r.Refused == 1 && r.Lost == 0 },
		},
		{
			// Task 2 was handed out by a take that finished before another began, which
			// then got task 1, waiting all along: out of order.
			name: "reordered", ordered: true,
			l: &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("2", 2, 2, 3), take("1", 1, 4, 5)}},
			f: &QueueFinal{Effects: []string{"0", "2", "1"}}, cell: "REORDERED 1",
			check: func(r QueueReport) bool { return r.OutOfOrder == 1 },
		},
		{
			// The same, but a dequeue failed without an answer at 1.5 ms, after task 1
			// was queued: Redis may have handed task 1 out then, unseen, and what came at
			// 4 ms a redelivery. In doubt, not reordered.
			name: "reordered in doubt", ordered: true,
			l: &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("2", 2, 2, 3), take("1", 1, 4, 5)},
				DoubtfulTakes: []time.Duration{1500 * time.Microsecond}},
			f: &QueueFinal{Effects: []string{"0", "2", "1"}}, cell: "SAFE",
			check: func(r QueueReport) bool { return r.OutOfOrder == 0 && r.InDoubtTaken == 1 },
		},
		{
			// A failed dequeue after the late delivery excuses nothing.
			name: "reordered, doubt after", ordered: true,
			l: &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("2", 2, 2, 3), take("1", 1, 4, 5)},
				DoubtfulTakes: []time.Duration{6 * time.Millisecond}},
			f: &QueueFinal{Effects: []string{"0", "2", "1"}}, cell: "REORDERED 1",
			check: func(r QueueReport) bool { return r.OutOfOrder == 1 && r.InDoubtTaken == 0 },
		},
		{
			// Overlapping takes may come back in either order.
			name: "concurrent takes", ordered: true,
			l: &QueueLedger{InitialStock: 3, Orders: orders(2), Takes: []Take{take("1", 1, 0, 5), take("0", 0, 1, 3)}},
			f: &QueueFinal{Effects: []string{"0", "1"}}, cell: "SAFE",
			check: func(r QueueReport) bool { return r.OutOfOrder == 0 },
		},
		{
			// A redelivery is out of order by nature, and not counted as such.
			name: "redelivered", ordered: true,
			l: &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("1", 1, 2, 3), take("2", 2, 4, 5), take("0", 0, 10, 11)}},
			f: &QueueFinal{Effects: []string{"0", "1", "2"}}, cell: "SAFE",
			check: func(r QueueReport) bool { return r.Redeliveries == 1 && r.OutOfOrder == 0 },
		},
		{
			// Effects beyond the stock: oversold.
			name: "oversold",
			l:    &QueueLedger{InitialStock: 1, Orders: orders(2), Takes: []Take{take("0", 0, 0, 1), take("1", 1, 2, 3)}},
			f:    &QueueFinal{Stock: -1, Effects: []string{"0", "1"}}, cell: "OVERSOLD 1",
			check: func(r QueueReport) bool { return r.NegativeStock },
		},
		{
			// Order 2's enqueue failed without an answer (the server died between its
			// write and its reply) and was applied: in doubt, no phantom, SAFE.
			name: "applied in doubt",
			l: &QueueLedger{InitialStock: 3, Orders: append(orders(2), Enqueued{ID: "2", InDoubt: true}),
				Takes: []Take{take("0", 0, 0, 1), take("1", 1, 2, 3), take("2", 2, 4, 5)}},
			f: &QueueFinal{Stock: 0, Effects: []string{"0", "1", "2"}}, cell: "SAFE",
			check: func(r QueueReport) bool {
				return r.InDoubtApplied == 1 && r.Phantom == 0 && r.Accepted == 2 && r.Verdict() == "IN-DOUBT-APPLIED 1"
			},
		},
		{
			// Order 2 was refused outright (Redis answered with an error), yet applied:
			// nobody placed it, a phantom, which is an order applied more often than
			// placed (DUPLICATED), not a lost one.
			name: "phantom",
			l: &QueueLedger{InitialStock: 3, Orders: append(orders(2), Enqueued{ID: "2"}),
				Takes: []Take{take("0", 0, 0, 1), take("1", 1, 2, 3), take("2", 2, 4, 5)}},
			f: &QueueFinal{Stock: 0, Effects: []string{"0", "1", "2"}}, cell: "DUPLICATED 1",
			check: func(r QueueReport) bool { return r.Phantom == 1 && r.Lost == 0 && r.InDoubtApplied == 0 },
		},
		{
			// Redis could not be read after the sale: nothing is known lost, however
			// many orders were accepted.
			name: "final unknown",
			l:    &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1)}},
			cell: "UNKNOWN",
			check: func(r QueueReport) bool {
				return r.FinalUnknown && r.Lost == 0 && r.Accepted == 3 && r.Verdict() == "UNKNOWN"
			},
		},
		{
			// The workers' own ledger still shows a reordering without the final state.
			name: "final unknown, reordered", ordered: true,
			l:     &QueueLedger{InitialStock: 3, Orders: orders(3), Takes: []Take{take("0", 0, 0, 1), take("2", 2, 2, 3), take("1", 1, 4, 5)}},
			cell:  "REORDERED 1",
			check: func(r QueueReport) bool { return r.FinalUnknown && r.Lost == 0 },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := CheckQueue(tt.l, tt.f, tt.ordered)
			if r.Cell() != tt.cell || !tt.check(r) {
				t.Errorf("want %s, got %s: %+v", tt.cell, r.Cell(), r)
			}
		})
	}
}

// A lease queue may hand a task out again once its lease is up or its worker acked it,
// never while the first delivery is surely still leased; a dead worker never acks.
func TestLeaseOverlaps(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name  string
		takes []Take
		want  int
	}{
		{"once", []Take{{ID: "1", Begin: 0, End: ms(1), Fulfilled: ms(5), Result: TakeFulfilled}}, 0},
		{"again after the lease", []Take{{ID: "1", Begin: 0, End: ms(1), Result: TakeCrashed}, {ID: "1", Begin: ms(100), End: ms(101), Result: TakeFulfilled}}, 0},
		{"again while a dead worker's lease runs", []Take{{ID: "1", Begin: 0, End: ms(1), Result: TakeCrashed}, {ID: "1", Begin: ms(40), End: ms(41), Result: TakeFulfilled}}, 1},
		{"again while its worker works", []Take{{ID: "1", Begin: 0, End: ms(1), Fulfilled: ms(30), Result: TakeFulfilled}, {ID: "1", Begin: ms(10), End: ms(11), Result: TakeRepeat}}, 1},
		{"again after the ack", []Take{{ID: "1", Begin: 0, End: ms(1), Fulfilled: ms(5), Result: TakeFulfilled}, {ID: "1", Begin: ms(6), End: ms(7), Result: TakeRepeat}}, 0},
		{"a claim within Redis's millisecond of the expiry", []Take{{ID: "1", Begin: 0, End: ms(1), Result: TakeCrashed}, {ID: "1", Begin: ms(48), End: ms(49) + 500*time.Microsecond, Result: TakeFulfilled}}, 0},
		{"a claim 2 ms early", []Take{{ID: "1", Begin: 0, End: ms(1), Result: TakeCrashed}, {ID: "1", Begin: ms(47), End: ms(48), Result: TakeFulfilled}}, 1},
		{"a reply that could straddle the expiry", []Take{{ID: "1", Begin: 0, End: ms(1), Result: TakeCrashed}, {ID: "1", Begin: ms(49), End: ms(51), Result: TakeFulfilled}}, 0},
	}
	for _, tt := range tests {
		l := &QueueLedger{Takes: tt.takes, Lease: ms(50)}
		if got := leaseOverlaps(byTask(l.Takes), l.Lease); got != tt.want {
			t.Errorf("%s: want %d, got %d", tt.name, tt.want, got)
		}
	}
}

// A duplicate came of a worker that outlived its lease when the task's first worker,
// alive, acked past its lease and the redelivery came after it ran out, taken before or
// after the late ack; not when the lease broke, the worker had died, or had acked in
// time.
func TestOutlivedDuplicates(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name  string
		takes []Take
		want  int
	}{
		{"again after the lease, its worker still at it", []Take{{ID: "0", End: ms(1), Fulfilled: ms(80), Result: TakeFulfilled}, {ID: "0", Begin: ms(60), End: ms(61), Fulfilled: ms(62), Result: TakeFulfilled}}, 1},
		{"again under the lease", []Take{{ID: "0", End: ms(1), Fulfilled: ms(80), Result: TakeFulfilled}, {ID: "0", Begin: ms(30), End: ms(31), Fulfilled: ms(32), Result: TakeFulfilled}}, 0},
		{"taken again after the late ack", []Take{{ID: "0", End: ms(1), Fulfilled: ms(55), Result: TakeFulfilled}, {ID: "0", Begin: ms(50), End: ms(61), Fulfilled: ms(62), Result: TakeFulfilled}}, 1},
		{"again though acked within the lease", []Take{{ID: "0", End: ms(1), Fulfilled: ms(40), Result: TakeFulfilled}, {ID: "0", Begin: ms(60), End: ms(61), Fulfilled: ms(62), Result: TakeFulfilled}}, 0},
		{"acked within the margin of the lease's end", []Take{{ID: "0", End: ms(1), Fulfilled: ms(52), Result: TakeFulfilled}, {ID: "0", Begin: ms(60), End: ms(61), Fulfilled: ms(62), Result: TakeFulfilled}}, 0},
		{"its worker died after applying", []Take{{ID: "0", End: ms(1), Fulfilled: ms(80), Result: TakeCrashed}, {ID: "0", Begin: ms(60), End: ms(61), Fulfilled: ms(62), Result: TakeFulfilled}}, 0},
	}
	for _, tt := range tests {
		l := &QueueLedger{InitialStock: 5, Orders: orders(1), Takes: tt.takes, Lease: ms(50)}
		r := CheckQueue(l, &QueueFinal{Stock: 3, Effects: []string{"0", "0"}}, false)
		if r.DuplicatedEffects != 1 || r.OutlivedDuplicates != tt.want {
			t.Errorf("%s: want 1 duplicate, %d outlived; got %d, %d", tt.name, tt.want, r.DuplicatedEffects, r.OutlivedDuplicates)
		}
	}
}

// Each death holding a task is timed to the task's next delivery, or counted as never
// delivered again.
func TestRecoveries(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	l := &QueueLedger{Takes: []Take{
		{ID: "1", Begin: 0, End: ms(1), Result: TakeCrashed},
		{ID: "2", Begin: 0, End: ms(2), Result: TakeCrashed},
		{ID: "1", Begin: ms(300), End: ms(301), Result: TakeFulfilled},
		{ID: "3", Begin: 0, End: ms(1), Result: TakeFulfilled},
	}}
	after, lost := Recoveries(l)
	if len(after) != 1 || after[0] != ms(300) || lost != 1 {
		t.Errorf("want [300ms] and 1 never redelivered, got %v and %d", after, lost)
	}
}

// The tasks a queue mishandled are kept with their deliveries for the timelines: those
// applied twice first, then those lost after a worker took them, then deliveries under a
// live lease; at most three.
func TestTaskViolations(t *testing.T) {
	crashed := take("1", 1, 2, 3)
	crashed.Result = TakeCrashed
	l := &QueueLedger{InitialStock: 9, Orders: orders(6), Lease: 100 * time.Millisecond, Takes: []Take{
		take("0", 0, 0, 1), take("0", 0, 50, 51), // applied twice, the second under the first's lease
		crashed,                                // taken, then never applied
		take("2", 2, 4, 5), take("2", 2, 6, 7), // a delivery under a live lease, applied once
		take("3", 3, 8, 9), take("4", 4, 10, 11), take("5", 5, 12, 13),
	}}
	l.Takes[3].Fulfilled = 60 * time.Millisecond // the first delivery of "2" still at work
	r := CheckQueue(l, &QueueFinal{Stock: 5, Effects: []string{"0", "0", "2", "3", "4", "5"}}, false)
	want := []struct {
		class Class
		task  string
		n     int
	}{{ClassDuplicated, "0", 2}, {ClassLost, "1", 1}, {"", "2", 2}}
	if len(r.Tasks) != len(want) {
		t.Fatalf("want %d task violations, got %+v", len(want), r.Tasks)
	}
	for i, w := range want {
		if v := r.Tasks[i]; v.Class != w.class || v.Task != w.task || len(v.Takes) != w.n {
			t.Errorf("violation %d: want %q of task %s with %d deliveries, got %+v", i, w.class, w.task, w.n, v)
		}
	}
	if CheckQueue(l, nil, false).Tasks != nil {
		t.Error("want no task violations without the final state")
	}
}
