package results

import (
	"math"
	"testing"

	"github.com/stockbench/stockbench/oracle"
)

// TestFisherExact checks the test against the two-sided p-values R's fisher.test gives.
func TestFisherExact(t *testing.T) {
	for _, tc := range []struct {
		a, n, b, m int
		want       float64
	}{
		{8, 10, 0, 10, 0.0007145},
		{10, 10, 0, 10, 1.083e-05},
		{5, 10, 5, 10, 1},
		{3, 10, 0, 10, 0.2105},
		{1, 3, 2, 3, 1},
		{0, 10, 0, 10, 1},
	} {
		if got := FisherExact(tc.a, tc.n, tc.b, tc.m); math.Abs(got-tc.want) > tc.want*1e-3 {
			t.Errorf("FisherExact(%d/%d vs %d/%d) = %.7g, want %.7g", tc.a, tc.n, tc.b, tc.m, got, tc.want)
		}
	}
}

func TestWilson(t *testing.T) {
	lo, hi := Wilson(0, 10)
	if lo != 0 || math.Abs(hi-0.2775) > 1e-3 {
		t.Errorf("Wilson(0, 10) = %.4f-%.4f, want 0-0.2775", lo, hi)
	}
	if got := Proportion(7, 10); got != "7/10 (40%-89%)" {
		t.Errorf("Proportion(7, 10) = %q", got)
	}
}

func TestDrawsCell(t *testing.T) {
	var r Draws
	for i, c := range []oracle.Class{oracle.ClassSafe, oracle.ClassLost, oracle.ClassLost, oracle.ClassSafe, oracle.ClassLost} {
		run := Run{Params: Params{Seed: uint64(i)}, Verdict: oracle.Verdict{Class: c}}
		if c == oracle.ClassLost {
			run.Verdict.Findings = []string{"LOST-UPDATE 2", "LOCK-BROKEN 1", "NOT-EXERCISED slow-work"}
		}
		r.Add(&run)
	}
	if got := r.Cell(); got != "LOST 3/5 SAFE 2/5" {
		t.Errorf("Cell = %q", got)
	}
	if got := r.Lines(); len(got) != 2 || got[0] != "LOCK-BROKEN 3/5 (23%-88%)" {
		t.Errorf("Lines = %q", got)
	}
	if got, _ := r.Share("LOCK-BROKEN"); got != 0.6 {
		t.Errorf("Share(LOCK-BROKEN) = %v", got)
	}
	if got, k := r.Share("SAFE", "LOST-UPDATE"); got != 1 || k != 5 {
		t.Errorf("Share(SAFE, LOST-UPDATE) = %v, %d", got, k)
	}
	if got, _ := r.Share("NOT-EXERCISED"); got != 0 {
		t.Errorf("Share(NOT-EXERCISED) = %v", got)
	}
	if r.Each[1].Seed != 1 || r.Each[1].Class != oracle.ClassLost {
		t.Errorf("Each[1] = %+v", r.Each[1])
	}
}
