package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

func TestWorst(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{ExitOK, ExitOK, ExitOK},
		{ExitOK, ExitUnfinished, ExitUnfinished},
		{ExitUnfinished, ExitFailed, ExitFailed},
		{ExitFailed, ExitUnfinished, ExitFailed},
		{ExitFailed, ExitInterrupted, ExitInterrupted},
		{ExitUsage, ExitFailed, ExitUsage},
		{ExitOK, 42, 42},
	} {
		if got := Worst(tc.a, tc.b); got != tc.want {
			t.Errorf("Worst(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestJudge: a failing sale outranks an unfinished one, and each is named on a line of
// its own before the exit line.
func TestJudge(t *testing.T) {
	sale := func(impl string, c oracle.Class, complete bool, expected ...oracle.Class) results.Run {
		return results.Run{Scenario: "flash-sale", Impl: impl, Params: results.Params{Faults: "none"}, Complete: complete,
			Verdict: oracle.Verdict{Class: c, Count: 2}, Expected: expected}
	}
	// outpaced oversold after a holder outlived its 1s lease in its own round trips.
	outpaced := sale("c", oracle.ClassOversold, true, oracle.ClassSafe)
	outpaced.Params.Faults = "net-latency"
	outpaced.Oracle = oracle.Report{Bought: 12, InitialStock: 10, Oversold: 2, Overlaps: 3, Earliest: &oracle.Violation{Class: oracle.ClassOverlap,
		First:  oracle.Hold{Buyer: 4, Enter: time.Millisecond, Leave: 1300 * time.Millisecond, Lease: time.Second},
		Second: oracle.Hold{Buyer: 9, Enter: 1005 * time.Millisecond}, At: 1005 * time.Millisecond}}
	tests := []struct {
		name  string
		runs  []results.Run
		want  int
		lines []string
	}{
		{"worse at the machine's pace", []results.Run{sale("a", oracle.ClassSafe, true, oracle.ClassSafe), outpaced},
			ExitOK, []string{"OUTPACED flash-sale/c/net-latency: OVERSOLD 2, worse than the SAFE it documents, but a second holder first came in (buyer 9, at 1.005s) after buyer 4 had held the lock 1.299s of a 1s lease",
				"exit 0: every sale but 1 earned a class its design documents, or found nothing; 1 did worse only at the machine's pace, so did not put its design's claim to the test"}},
		{"all as documented", []results.Run{sale("a", oracle.ClassSafe, true, oracle.ClassSafe), sale("b", oracle.ClassOversold, true, oracle.ClassOversold)},
			ExitOK, []string{"exit 0: every sale earned a class its design documents, or found nothing (documented findings held: OVERSOLD 1;"}},
		{"one unfinished", []results.Run{sale("a", oracle.ClassSafe, true), sale("b", oracle.ClassSafe, false)},
			ExitUnfinished, []string{"UNFINISHED flash-sale/b/none: did not finish", "exit 3: 1 of 2 sales could not finish or be judged"}},
		{"worse and unfinished", []results.Run{sale("a", oracle.ClassLost, true, oracle.ClassSafe), sale("b", oracle.ClassUnknown, true)},
			ExitFailed, []string{"FAIL flash-sale/a/none: LOST 2, worse than the SAFE it documents", "UNFINISHED flash-sale/b/none: UNKNOWN", "exit 1: 1 of 2 sales failed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Judge(results.Policy{})(&results.File{Runs: tt.runs, Complete: true})
			lines, code := append(r.Lines, r.Line()), r.Code
			if code != tt.want || len(lines) != len(tt.lines) {
				t.Fatalf("code %d, lines %q; want %d, %q", code, lines, tt.want, tt.lines)
			}
			for i, l := range tt.lines {
				if !strings.HasPrefix(lines[i], l) {
					t.Errorf("line %d: %q, want it to begin %q", i, lines[i], l)
				}
			}
		})
	}
}
