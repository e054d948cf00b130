package oracle

import (
	"reflect"
	"testing"
)

// TestVerdictViews: the cell and the line are views of one verdict, and the cell and
// findings read back into the same verdict.
func TestVerdictViews(t *testing.T) {
	for _, tt := range []struct {
		v          Verdict
		cell, line string
	}{
		{Verdict{Class: ClassSafe}, "SAFE", "SAFE"},
		{Verdict{Class: ClassOversold, Count: 70, Broken: true, Findings: []string{"OVERSOLD 70", "LOCK-BROKEN 41"}}, "OVERSOLD 70 BROKEN", "OVERSOLD 70 LOCK-BROKEN 41"},
		{Verdict{Class: ClassLost, StockGone: true, Findings: []string{"STOCK-GONE"}}, "LOST STOCK", "STOCK-GONE"},
		{Verdict{Class: ClassOverlap, Count: 3, Findings: []string{"OVERLAP 3"}}, "OVERLAP 3", "OVERLAP 3"},
		{Verdict{Class: ClassStuck, Findings: []string{"STUCK"}}, "STUCK", "STUCK"},
		{Verdict{Class: ClassSafe, Findings: []string{"LEASE-OVERLAP 2"}}, "SAFE", "LEASE-OVERLAP 2"},
		{Verdict{Class: ClassUnknown}, "UNKNOWN", "UNKNOWN"},
	} {
		if got := tt.v.Cell(); got != tt.cell {
			t.Errorf("%+v: cell %q, want %q", tt.v, got, tt.cell)
		}
		if got := tt.v.String(); got != tt.line {
			t.Errorf("%+v: line %q, want %q", tt.v, got, tt.line)
		}
		back, err := ParseVerdict(tt.v.Class, tt.v.Cell(), tt.v.Findings)
		if err != nil || !reflect.DeepEqual(back, tt.v) {
			t.Errorf("%+v read back as %+v (%v)", tt.v, back, err)
		}
	}
	for _, bad := range []struct {
		class Class
		cell  string
	}{{ClassOversold, "LOST 3"}, {ClassOversold, "OVERSOLD three"}, {ClassOversold, "OVERSOLD 3 BENT"}, {ClassLost, "LOST 1 2 3"}} {
		if _, err := ParseVerdict(bad.class, bad.cell, nil); err == nil {
			t.Errorf("%s %q: read without an error", bad.class, bad.cell)
		}
	}
}

// TestWithUnfired: faults that never struck are a finding, and make SAFE NOT-EXERCISED
// but leave a finding's class, and UNKNOWN, as they were.
func TestWithUnfired(t *testing.T) {
	for _, tt := range []struct {
		v          Verdict
		cell, line string
	}{
		{Verdict{Class: ClassSafe}, "NOT-EXERCISED", "NOT-EXERCISED slow-work"},
		{Verdict{Class: ClassOversold, Count: 1, Findings: []string{"OVERSOLD 1"}}, "OVERSOLD 1", "OVERSOLD 1 NOT-EXERCISED slow-work"},
		{Verdict{Class: ClassUnknown}, "UNKNOWN", "UNKNOWN NOT-EXERCISED slow-work"},
	} {
		got := tt.v.WithUnfired([]string{"slow-work"})
		if got.Cell() != tt.cell || got.String() != tt.line {
			t.Errorf("%+v: %q / %q, want %q / %q", tt.v, got.Cell(), got.String(), tt.cell, tt.line)
		}
	}
	if v := (Verdict{Class: ClassSafe}).WithUnfired(nil); v.Class != ClassSafe {
		t.Errorf("nothing unfired: want SAFE, got %s", v.Class)
	}
}

// TestVerdictWorse: the more severe class stands first, then the more damage; SAFE and
// NOT-EXERCISED stand alike.
func TestVerdictWorse(t *testing.T) {
	for _, tc := range []struct {
		a, b Verdict
		want bool
	}{
		{Verdict{Class: ClassOversold, Count: 1}, Verdict{Class: ClassLost, Count: 50}, true},
		{Verdict{Class: ClassLost, Count: 50}, Verdict{Class: ClassOversold, Count: 1}, false},
		{Verdict{Class: ClassLost, Count: 3}, Verdict{Class: ClassLost, Count: 2}, true},
		{Verdict{Class: ClassLost, Count: 2}, Verdict{Class: ClassLost, Count: 2}, false},
		{Verdict{Class: ClassNotExercised}, Verdict{Class: ClassSafe}, false},
	} {
		if got := tc.a.Worse(tc.b); got != tc.want {
			t.Errorf("%s worse than %s: %v, want %v", tc.a.Cell(), tc.b.Cell(), got, tc.want)
		}
	}
}
