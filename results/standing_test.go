package results

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
)

// TestStand is the exit status rule's table: each kind of sale under each kind of
// policy, its standing and the words that say why.
func TestStand(t *testing.T) {
	run := func(c oracle.Class, expected ...oracle.Class) *Run {
		return &Run{Complete: true, Verdict: oracle.Verdict{Class: c, Count: 3}, Expected: expected}
	}
	// mine is a sale of a design that documents no verdict at all.
	mine := func(c oracle.Class) *Run {
		r := run(c)
		r.Undocumented = true
		return r
	}
	unfinished := run(oracle.ClassSafe)
	unfinished.Complete, unfinished.Error = false, "redis: connection refused"
	var none Policy
	failOn := Policy{FailOn: []oracle.Class{oracle.ClassOversold}}
	expect := Policy{Expect: []oracle.Class{oracle.ClassSafe}}
	tests := []struct {
		name string
		p    Policy
		r    *Run
		want Standing
		why  string
	}{
		{"documented SAFE", none, run(oracle.ClassSafe, oracle.ClassSafe), Held, ""},
		{"documented OVERSOLD", none, run(oracle.ClassOversold, oracle.ClassOversold), Held, ""},
		{"better than documented", none, run(oracle.ClassSafe, oracle.ClassOversold), Held, "better than the OVERSOLD it documents"},
		{"less severe, not documented", none, run(oracle.ClassStuck, oracle.ClassOversold, oracle.ClassLost), Held, "better"},
		{"worse than documented", none, run(oracle.ClassBroken, oracle.ClassSafe, oracle.ClassOverlap, oracle.ClassStuck), Worse, "worse than the SAFE, OVERLAP, STUCK it documents"},
		{"not exercised, documented SAFE", none, run(oracle.ClassNotExercised, oracle.ClassSafe), Held, "better"},
		{"undocumented, nothing found", none, mine(oracle.ClassSafe), Held, ""},
		{"undocumented, not exercised", none, mine(oracle.ClassNotExercised), Held, ""},
		{"undocumented STUCK", none, mine(oracle.ClassStuck), Worse, "STUCK, and the design documents no verdict at all"},
		{"undocumented OVERLAP", none, mine(oracle.ClassOverlap), Worse, "OVERLAP 3, and the design documents no verdict at all"},
		{"not documented for this plan", none, run(oracle.ClassLost), Unclaimed, "LOST 3, where the design documents no verdict"},
		{"not documented for this plan, --fail-on", failOn, run(oracle.ClassOversold), Worse, "which --fail-on names"},
		{"UNKNOWN", none, run(oracle.ClassUnknown, oracle.ClassSafe), Unfinished, "UNKNOWN"},
		{"did not finish", none, unfinished, Unfinished, "did not finish: redis: connection refused"},
		{"did not finish, whatever --expect says", expect, unfinished, Unfinished, "did not finish"},
		{"--fail-on a documented class", failOn, run(oracle.ClassOversold, oracle.ClassOversold), Worse, "OVERSOLD 3, which --fail-on names"},
		{"--fail-on another class", failOn, run(oracle.ClassLost, oracle.ClassLost), Held, ""},
		{"--expect met", expect, run(oracle.ClassSafe, oracle.ClassOversold), Held, ""},
		{"--expect, better than claimed", Policy{Expect: []oracle.Class{oracle.ClassOversold}}, run(oracle.ClassSafe), Worse, "not what --expect names (OVERSOLD)"},
		{"--expect SAFE, not exercised", expect, run(oracle.ClassNotExercised), Worse, "NOT-EXERCISED, not what --expect names"},
		{"stated: documentation not read", Policy{Stated: true}, run(oracle.ClassLost, oracle.ClassSafe), Held, ""},
		{"stated: --fail-on still", Policy{Stated: true, FailOn: []oracle.Class{oracle.ClassLost}}, mine(oracle.ClassLost), Worse, "which --fail-on names"},
		{"stated: undocumented damage not read", Policy{Stated: true}, mine(oracle.ClassLost), Held, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := tt.p.Stand(tt.r)
			if got != tt.want || (tt.why == "") != (why == "") || !strings.Contains(why, tt.why) {
				t.Errorf("Stand = %d %q, want %d %q", got, why, tt.want, tt.why)
			}
		})
	}
}

func TestParseClasses(t *testing.T) {
	got, err := ParseClasses(" oversold, LOST,oversold ,not-exercised")
	if err != nil || len(got) != 3 || got[0] != oracle.ClassOversold || got[1] != oracle.ClassLost || got[2] != oracle.ClassNotExercised {
		t.Errorf("ParseClasses = %v, %v", got, err)
	}
	for _, bad := range []string{"", " , ", "OVERSOLDD", "UNKNOWN"} {
		if _, err := ParseClasses(bad); err == nil || !strings.Contains(err.Error(), "OVERSOLD") {
			t.Errorf("ParseClasses(%q): want an error listing the classes, got %v", bad, err)
		}
	}
}
