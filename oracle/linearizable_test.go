package oracle

import (
	"testing"
	"time"
)

// sale builds a ledger of confirmed purchases, each [enter, leave) ms leaving left.
func sale(stock int64, holds ...[3]int64) *Ledger {
	l := &Ledger{InitialStock: stock}
	for _, h := range holds {
		l.Entries = append(l.Entries, bought(int(h[0]), int(h[1]), h[2]))
	}
	return l
}

func TestCheckLinearizable(t *testing.T) {
	tests := []struct {
		name    string
		l       *Ledger
		verdict LinearVerdict
	}{
		// One at a time, one unit each.
		{"serial", sale(3, [3]int64{0, 10, 2}, [3]int64{10, 20, 1}, [3]int64{20, 30, 0}), Linearizable},
		// Overlapping holds that can be ordered: 2 then 1.
		{"overlapping but orderable", sale(3, [3]int64{0, 10, 1}, [3]int64{5, 8, 2}), Linearizable},
		// Two purchases both left 2: a lost update.
		{"lost update", sale(3, [3]int64{0, 10, 2}, [3]int64{5, 12, 2}), NotLinearizable},
		// A late write puts units back: 2, 1, then 2 again after both.
		{"resurrected", sale(3, [3]int64{0, 10, 2}, [3]int64{10, 20, 1}, [3]int64{25, 30, 2}), NotLinearizable},
		// Real time forbids 1 before 2: the purchase that left 1 ended before the other began.
		{"real time", sale(3, [3]int64{0, 5, 1}, [3]int64{10, 20, 2}), NotLinearizable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckLinearizable(tt.l, time.Second)
			if got.Verdict != tt.verdict || !got.Exact {
				t.Errorf("want %s (exact), got %+v", tt.verdict, got)
			}
			if (got.FirstViolation != nil) != (tt.verdict == NotLinearizable) {
				t.Errorf("first violation %+v with verdict %s", got.FirstViolation, got.Verdict)
			}
		})
	}
}

// TestCheckLinearizableWindows: a long history is checked in windows; a lost update deep
// inside it is found in its window, and a clean one raises nothing.
func TestCheckLinearizableWindows(t *testing.T) {
	const n = 2500
	clean := &Ledger{InitialStock: n}
	for i := range int64(n) {
		clean.Entries = append(clean.Entries, bought(int(i*10), int(i*10+5), n-1-i))
	}
	if got := CheckLinearizable(clean, time.Second); got.Verdict != Linearizable || got.Exact || got.Windows != 13 {
		t.Errorf("clean: %+v", got)
	}
	broken := &Ledger{InitialStock: n, Entries: append([]Entry(nil), clean.Entries...)}
	broken.Entries[1234].Left = broken.Entries[1233].Left // two purchases leave the same
	got := CheckLinearizable(broken, time.Second)
	if got.Verdict != NotLinearizable || got.FirstViolation == nil || got.FirstViolation.Index != 1234/WindowOps {
		t.Errorf("broken: %+v", got)
	}
}
