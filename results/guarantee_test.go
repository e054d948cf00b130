package results

import (
	"testing"

	"github.com/stockbench/stockbench/oracle"
)

// TestGuarantee: a queue sale's guarantee is read from what became of its orders, and
// losses count against the queue only beyond the tasks its dead workers held.
func TestGuarantee(t *testing.T) {
	for _, tt := range []struct {
		name     string
		q        oracle.QueueReport
		rc       *Recoveries
		complete bool
		class    oracle.Class
		want     Guarantee
	}{
		{"nothing wrong", oracle.QueueReport{}, nil, true, oracle.ClassSafe, Once},
		{"a dead worker's task came back", oracle.QueueReport{}, &Recoveries{Deaths: 3, Redelivered: 3}, true, oracle.ClassSafe, Once},
		{"the dead workers' tasks lost", oracle.QueueReport{Lost: 3}, &Recoveries{Deaths: 3, Never: 3}, true, oracle.ClassLost, AtMostOnce},
		{"more lost than dead workers held", oracle.QueueReport{Lost: 4}, &Recoveries{Deaths: 3, Never: 3}, true, oracle.ClassLost, LostOrders},
		{"a restart forgot the queue", oracle.QueueReport{Lost: 60}, nil, true, oracle.ClassLost, LostOrders},
		{"done twice", oracle.QueueReport{DuplicatedEffects: 2}, nil, true, oracle.ClassDuplicated, AtLeastOnce},
		{"applied though nobody placed it", oracle.QueueReport{Phantom: 1}, nil, true, oracle.ClassDuplicated, AtLeastOnce},
		{"lost and done twice", oracle.QueueReport{Lost: 1, DuplicatedEffects: 1}, &Recoveries{Deaths: 1, Never: 1}, true, oracle.ClassLost, Neither},
		{"Redis unreadable", oracle.QueueReport{FinalUnknown: true}, nil, true, oracle.ClassUnknown, GuessNothing},
		{"the sale did not finish", oracle.QueueReport{Lost: 5}, nil, false, oracle.ClassLost, GuessNothing},
		{"the fault never struck", oracle.QueueReport{}, nil, true, oracle.ClassNotExercised, Unexercised},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			r := Run{Queue: &q, Recovery: tt.rc, Complete: tt.complete, Verdict: oracle.Verdict{Class: tt.class}}
			if got, ok := r.Guarantee(); !ok || got != tt.want {
				t.Errorf("want %q, got %q (%v)", tt.want, got, ok)
			}
		})
	}
	if _, ok := (&Run{}).Guarantee(); ok {
		t.Error("a lock sale has no delivery guarantee")
	}
}

// TestRecoveryText: what became of the dead workers' tasks, said only when one died.
func TestRecoveryText(t *testing.T) {
	r := Run{Recovery: &Recoveries{Deaths: 3, Redelivered: 2, Never: 1},
		Latency: map[string]Latency{Recovery.String(): {Count: 2, P50Us: 412_300, MaxUs: 640_000}}}
	if got, want := r.RecoveryText(), "2 of 3 back, in 412ms (slowest 640ms)"; got != want {
		t.Errorf("want %q, got %q", want, got)
	}
	r.Latency[Recovery.String()] = Latency{Count: 1, P50Us: 0, MaxUs: 0}
	if got, want := r.RecoveryText(), "2 of 3 back, in under 1ms (slowest under 1ms)"; got != want {
		t.Errorf("want %q, got %q", want, got)
	}
	if got := (&Run{Recovery: &Recoveries{}}).RecoveryText(); got != "" {
		t.Errorf("no death: want nothing said, got %q", got)
	}
}
