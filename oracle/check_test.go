package oracle

import (
	"slices"
	"testing"
	"time"
)

const ms = time.Millisecond

// bought is a buyer who held [enter, leave) in milliseconds and left `left` units.
func bought(enter, leave int, left int64) Entry {
	return Entry{Outcome: Bought, Held: true, Enter: time.Duration(enter) * ms, Leave: time.Duration(leave) * ms,
		Done: time.Duration(leave+1) * ms, Left: left}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		stock    int64
		entries  []Entry
		final    Final
		want     Report // only the fields named in check are compared
		check    []string
		findings []string
	}{
		{
			// Three serial holds sell three units: nothing to report.
			name: "clean sell-out", stock: 3,
			entries: []Entry{bought(0, 10, 2), bought(10, 20, 1), bought(20, 30, 0), {Outcome: SoldOut, Done: 40 * ms}},
			final:   Final{Stock: 0, Orders: 3},
			want:    Report{Bought: 3, SoldOut: 1, SellOut: 31 * ms, LastSale: 31 * ms},
			check:   []string{"Bought", "SoldOut", "SellOut", "LastSale", "Oversold", "LostUpdates", "Overlaps"},
		},
		{
			// Two buyers read 2 together and both wrote 1 (one lost update); two more sales
			// take the counter to -1: four orders for two units, oversold by exactly 2.
			name: "known oversell", stock: 2,
			entries:  []Entry{bought(0, 10, 1), bought(5, 12, 1), bought(12, 20, 0), bought(20, 25, -1)},
			final:    Final{Stock: -1, Orders: 4},
			want:     Report{Bought: 4, Oversold: 2, NegativeStock: true, LostUpdates: 1, Overlaps: 1, LongestOverlap: 5 * ms},
			check:    []string{"Bought", "Oversold", "NegativeStock", "LostUpdates", "Overlaps", "LongestOverlap"},
			findings: []string{"OVERSOLD 2", "NEGATIVE -1", "LOST-UPDATE 1", "OVERLAP 1"},
		},
		{
			// A holder told by its library that it no longer held the lock withdrew
			// without writing: counted apart, and the stock it left is no lost update.
			name: "withdrawn holder", stock: 2,
			entries: []Entry{bought(0, 10, 1), {Outcome: Withdrew, Held: true, Enter: 10 * ms, Leave: 15 * ms, Done: 16 * ms}, bought(15, 20, 0)},
			final:   Final{Stock: 0, Orders: 2},
			want:    Report{Bought: 2, Withdrew: 1},
			check:   []string{"Bought", "Withdrew", "Oversold", "LostUpdates", "Overlaps"},
		},
		{
			// One long hold spans two short ones: both overlap it, and the longest
			// overlap is the longer short hold.
			name: "nested holds", stock: 10,
			entries:  []Entry{bought(0, 100, 9), bought(10, 20, 8), bought(30, 70, 7)},
			final:    Final{Stock: 7, Orders: 3},
			want:     Report{Overlaps: 2, LongestOverlap: 40 * ms},
			check:    []string{"Overlaps", "LongestOverlap"},
			findings: []string{"OVERLAP 2"},
		},
		{
			// Holds that touch end to start do not overlap.
			name: "touching holds", stock: 10,
			entries: []Entry{bought(0, 10, 9), bought(10, 20, 8)},
			final:   Final{Stock: 8, Orders: 2},
			want:    Report{Overlaps: 0},
			check:   []string{"Overlaps"},
		},
		{
			// A buyer who gave up before the sell-out met contention: counted, but the
			// stock sold out all the same, so it is no finding (SAFE, not STUCK).
			name: "gave up, sold out", stock: 1,
			entries: []Entry{{Outcome: GaveUp, Done: 5 * ms}, bought(6, 10, 0), {Outcome: GaveUp, Done: 50 * ms}},
			final:   Final{Stock: 0, Orders: 1},
			want:    Report{GaveUp: 2, GaveUpWithStock: 1, SellOut: 11 * ms, Unsold: 0},
			check:   []string{"GaveUp", "GaveUpWithStock", "SellOut", "Unsold"},
		},
		{
			// No sell-out: buyers gave up and stock stayed on the shelf: STUCK.
			name: "never sold out", stock: 5,
			entries:  []Entry{{Outcome: GaveUp, Done: 5 * ms}, bought(6, 10, 4), {Outcome: GaveUp, Done: 50 * ms}},
			final:    Final{Stock: 4, Orders: 1},
			want:     Report{GaveUpWithStock: 2, SellOut: 0, Unsold: 4},
			check:    []string{"GaveUpWithStock", "SellOut", "Unsold"},
			findings: []string{"UNSOLD 4 (GAVE-UP 2)"},
		},
		{
			// Stock left but nobody gave up (fewer buyers than units): nothing kept
			// anyone out.
			name: "more stock than buyers", stock: 5,
			entries: []Entry{bought(0, 10, 4), bought(10, 20, 3)},
			final:   Final{Stock: 3, Orders: 2},
			want:    Report{Unsold: 0},
			check:   []string{"Unsold"},
		},
		{
			// The server answered but the stock counter was gone: the data vanished (a
			// failover lost it), LOST, not an unreadable state.
			name: "stock gone", stock: 5,
			entries:  []Entry{bought(0, 10, 4), {Outcome: GaveUp, Done: 50 * ms}},
			final:    Final{StockGone: true, Orders: 0},
			want:     Report{StockGone: true, LostUpdates: 0, Unsold: 0, OrderMismatch: -1},
			check:    []string{"StockGone", "LostUpdates", "Unsold", "OrderMismatch"},
			findings: []string{"STOCK-GONE", "ORDERS -1"},
		},
		{
			// An order Redis recorded that no buyer was told about shows as a mismatch;
			// unfinished buyers are counted as pending.
			name: "orders mismatch", stock: 5,
			entries:  []Entry{bought(0, 1, 4), {}, {Outcome: Interrupted}},
			final:    Final{Stock: 3, Orders: 2},
			want:     Report{OrderMismatch: 1, LostUpdates: -1, Pending: 1, Interrupted: 1},
			check:    []string{"OrderMismatch", "LostUpdates", "Pending", "Interrupted"},
			findings: []string{"LOST-UPDATE -1", "ORDERS +1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(&Ledger{InitialStock: tt.stock, Entries: tt.entries}, &tt.final)
			for _, f := range tt.check {
				if exp, got := field(tt.want, f), field(got, f); exp != got {
					t.Errorf("%s: want %v, got %v", f, exp, got)
				}
			}
			if exp, got := tt.findings, got.Findings(); !slices.Equal(exp, got) {
				t.Errorf("findings: want %q, got %q", exp, got)
			}
			if len(tt.findings) == 0 && got.Verdict() != "SAFE" {
				t.Errorf("verdict: want SAFE, got %q", got.Verdict())
			}
		})
	}
}

// TestCheckFinalUnknown: when Redis could not be read after the sale, what the ledger
// alone shows is still reported, and nothing is called safe.
func TestCheckFinalUnknown(t *testing.T) {
	l := &Ledger{InitialStock: 1, Entries: []Entry{bought(0, 10, 0), bought(5, 12, 0)}}
	if exp, got := "OVERSOLD 1 OVERLAP 1", Check(l, nil).Verdict(); exp != got {
		t.Errorf("want %q, got %q", exp, got)
	}
	l = &Ledger{InitialStock: 1, Entries: []Entry{bought(0, 10, 0)}}
	if r := Check(l, nil); r.Verdict() != "UNKNOWN" || r.LostUpdates != 0 || !r.FinalUnknown {
		t.Errorf("want UNKNOWN with no stock-based findings, got %q %+v", r.Verdict(), r)
	}
}

// TestStuckAndClass: a lock left without a TTL, or with one past the horizon, is stuck;
// the class is the most severe finding, with its number in the cell.
func TestStuckAndClass(t *testing.T) {
	tests := []struct {
		name  string
		l     *Ledger
		f     Final
		class Class
		cell  string
	}{
		// A crashed holder's lock with no TTL: stuck.
		{"no ttl", &Ledger{InitialStock: 5, Entries: []Entry{bought(0, 1, 4), {Outcome: Crashed}}},
			Final{Stock: 4, Orders: 1, LockTTL: -1, Horizon: time.Second}, ClassStuck, "STUCK"},
		// A lock that expires within the horizon is not stuck.
		{"short ttl", &Ledger{InitialStock: 5, Entries: []Entry{bought(0, 1, 4)}},
			Final{Stock: 4, Orders: 1, LockTTL: 500 * ms, Horizon: time.Second}, ClassSafe, "SAFE"},
		// The seed port's 56-year lock outlives any horizon.
		{"ttl past horizon", &Ledger{InitialStock: 5, Entries: []Entry{bought(0, 1, 4)}},
			Final{Stock: 4, Orders: 1, LockTTL: 1e6 * time.Hour, Horizon: time.Second}, ClassStuck, "STUCK"},
		// Overlap outranks stuck; an oversell outranks both.
		{"overlap", &Ledger{InitialStock: 5, Entries: []Entry{bought(0, 10, 4), bought(5, 12, 3)}},
			Final{Stock: 3, Orders: 2, LockTTL: -1}, ClassOverlap, "OVERLAP 1"},
		{"oversold", &Ledger{InitialStock: 1, Entries: []Entry{bought(0, 10, 0), bought(5, 12, 0)}},
			Final{Stock: 0, Orders: 2}, ClassOversold, "OVERSOLD 1"},
		// Lost updates without an oversell.
		{"lost", &Ledger{InitialStock: 5, Entries: []Entry{bought(0, 10, 4), bought(10, 12, 4)}},
			Final{Stock: 4, Orders: 2}, ClassLost, "LOST 1"},
		// Contention past the retry timeout, the stock sold out all the same (a busy
		// lock, the Redlock-with-watchdog report): SAFE, whatever gave up.
		{"gave up, sold out", &Ledger{InitialStock: 1, Entries: []Entry{{Outcome: GaveUp, Done: 5 * ms}, bought(6, 10, 0)}},
			Final{Stock: 0, Orders: 1}, ClassSafe, "SAFE"},
		// Buyers gave up and stock stayed: the lock kept them from it.
		{"gave up, unsold", &Ledger{InitialStock: 2, Entries: []Entry{{Outcome: GaveUp, Done: 5 * ms}, bought(6, 10, 1)}},
			Final{Stock: 1, Orders: 1}, ClassStuck, "STUCK"},
		// The stock counter vanished (a failover lost it): LOST, not UNKNOWN.
		{"stock gone", &Ledger{InitialStock: 2, Entries: []Entry{bought(6, 10, 1)}},
			Final{StockGone: true, Orders: 1}, ClassLost, "LOST STOCK"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(tt.l, &tt.f)
			if r.Class() != tt.class || r.Cell() != tt.cell {
				t.Errorf("want %s / %q, got %s / %q", tt.class, tt.cell, r.Class(), r.Cell())
			}
		})
	}
}

func field(r Report, name string) any {
	return map[string]any{
		"Bought": r.Bought, "SoldOut": r.SoldOut, "GaveUp": r.GaveUp, "Pending": r.Pending,
		"Interrupted": r.Interrupted, "Oversold": r.Oversold, "NegativeStock": r.NegativeStock,
		"LostUpdates": r.LostUpdates, "OrderMismatch": r.OrderMismatch, "Overlaps": r.Overlaps,
		"LongestOverlap": r.LongestOverlap, "SellOut": r.SellOut, "GaveUpWithStock": r.GaveUpWithStock,
		"LastSale": r.LastSale,
	}[name]
}

func TestOutcomeString(t *testing.T) {
	for o, want := range map[Outcome]string{GaveUp: "gave-up", Withdrew: "withdrew", Withdrew + 1: "unknown"} {
		if got := o.String(); got != want {
			t.Errorf("outcome %d: want %q, got %q", o, want, got)
		}
	}
}

func TestClassAdmits(t *testing.T) {
	for _, tc := range []struct {
		claim, got Class
		want       bool
	}{
		{ClassSafe, ClassSafe, true},
		{ClassSafe, ClassNotExercised, true},
		{ClassSafe, ClassStuck, false},
		{ClassSafe, ClassOversold, false},
		{ClassOversold, ClassSafe, true},
		{ClassOversold, ClassLost, true},
		{ClassLost, ClassDuplicated, true},
		{ClassDuplicated, ClassLost, false},
		{ClassOverlap, ClassStuck, true},
		{ClassOversold, ClassUnknown, false}, // nothing admits no verdict
		{ClassUnknown, ClassSafe, false},
		{"MAYBE", ClassSafe, false},
	} {
		if got := tc.claim.Admits(tc.got); got != tc.want {
			t.Errorf("%s admits %s: want %v, got %v", tc.claim, tc.got, tc.want, got)
		}
	}
	if got := AtMost(ClassOverlap); !slices.Equal(got, []Class{ClassNotExercised, ClassSafe, ClassStuck, ClassOverlap}) {
		t.Errorf("AtMost(OVERLAP) = %v", got)
	}
}

// TestOrdersAsMultisets compares the order list with the confirmations: an order lost,
// one recorded twice and one for a buyer never told of a purchase are each found, though
// their counts alone cancel out.
func TestOrdersAsMultisets(t *testing.T) {
	l := NewLedger(4, 10)
	for i, o := range []Outcome{Bought, Bought, Bought, Failed} {
		l.Entries[i].Outcome = o
	}
	tests := []struct {
		name                        string
		ids                         []string
		missing, duplicate, phantom int
	}{
		{"as confirmed", []string{"2", "0", "1"}, 0, 0, 0},
		{"one lost, one phantom", []string{"0", "1", "3"}, 1, 0, 1},
		{"one twice", []string{"0", "1", "2", "2"}, 0, 1, 0},
		{"no such buyer", []string{"0", "1", "2", "x", "99"}, 0, 0, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Check(l, &Final{Stock: 7, Orders: int64(len(tt.ids)), OrderIDs: tt.ids})
			if r.MissingOrders != tt.missing || r.DuplicateOrders != tt.duplicate || r.PhantomOrders != tt.phantom {
				t.Errorf("missing, duplicate, phantom = %d, %d, %d; want %d, %d, %d",
					r.MissingOrders, r.DuplicateOrders, r.PhantomOrders, tt.missing, tt.duplicate, tt.phantom)
			}
			if safe := tt.missing+tt.duplicate+tt.phantom == 0; safe != (r.Class() == ClassSafe) {
				t.Errorf("class %s (%s)", r.Class(), r.Verdict())
			}
		})
	}
}

// TestMergedOverlapsAreTheWitness: holds recorded on several hosts' clocks are not swept
// for overlap; the witness's count stands instead.
func TestMergedOverlapsAreTheWitness(t *testing.T) {
	l := NewLedger(2, 10)
	for i := range l.Entries {
		l.Entries[i] = Entry{Outcome: Bought, Held: true, Enter: time.Duration(i), Leave: 10}
	}
	if r := Check(l, &Final{Stock: 8, Orders: 2}); r.Overlaps != 1 {
		t.Fatalf("one clock: want the sweep's 1 overlap, got %d", r.Overlaps)
	}
	l.Hosts = 2
	if r := Check(l, &Final{Stock: 8, Orders: 2, Witness: &Witness{Max: 1}}); r.Overlaps != 0 || r.Class() != ClassSafe {
		t.Errorf("two hosts, witness saw one holder at a time: want no overlap, got %d", r.Overlaps)
	}
	if r := Check(l, &Final{Stock: 8, Orders: 2, Witness: &Witness{Max: 2, Overlaps: 1}}); r.Overlaps != 1 || r.Class() != ClassOverlap {
		t.Errorf("two hosts, witness saw two: want OVERLAP 1, got %d (%s)", r.Overlaps, r.Class())
	}
}
