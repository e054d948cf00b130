package salestest

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// A claim names a fault of the design's sales and a class a sale can earn; anything
// else stops the test before a server starts.
func TestClaimsChecked(t *testing.T) {
	for _, tc := range []struct {
		claims Claims
		a      faults.Applies
		want   string
	}{
		{Claims{faults.ClientPause: oracle.ClassOversold, NoFault: oracle.ClassSafe}, faults.Locks, ""},
		{Claims{faults.WorkerCrash: oracle.ClassLost}, faults.Queues, ""},
		{Claims{faults.WorkerCrash: oracle.ClassLost}, faults.Locks, `claim under "worker-crash": not a fault of locks sales`},
		{Claims{"meteor": oracle.ClassSafe}, faults.Locks, `claim under "meteor"`},
		{Claims{faults.ClientPause: "BROKEN"}, faults.Locks, `"BROKEN" is no class a sale can earn`},
		{Claims{faults.ClientPause: oracle.ClassUnknown}, faults.Locks, `"UNKNOWN" is no class`},
	} {
		err := tc.claims.check(tc.a)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%v for %s: want %q, got %v", tc.claims, tc.a, tc.want, err)
		}
	}
	if c := (Claims{}).claim(faults.Evict); c != oracle.ClassSafe {
		t.Errorf("an unlisted fault: want SAFE claimed, got %s", c)
	}
	// A fault that kills the worker as worker-crash does, and more, is claimed as it
	// unless listed: a queue that loses a dead worker's task need not list each.
	lossy := Claims{faults.WorkerCrash: oracle.ClassLost, faults.ConsumerChurn: oracle.ClassSafe}
	for kind, want := range map[faults.Kind]oracle.Class{faults.Reclaimers: oracle.ClassLost, faults.EvictLease: oracle.ClassLost,
		faults.ConsumerChurn: oracle.ClassSafe, faults.WorkerPause: oracle.ClassSafe} {
		if c := lossy.claim(kind); c != want {
			t.Errorf("%s, with worker-crash claimed LOST: want %s claimed, got %s", kind, want, c)
		}
	}
}

// Without a list, the faults are every one of the sale's; -short keeps those that need
// no server of their own.
func TestFaultsRun(t *testing.T) {
	s := subject{applies: faults.Locks}
	kinds, err := s.faults()
	if err != nil {
		t.Fatal(err)
	}
	all := faults.Kinds(faults.Locks)
	if testing.Short() {
		for _, k := range kinds {
			if spec, _ := faults.Lookup(k); spec.Needs != (faults.Needs{}) {
				t.Errorf("-short runs %s, which needs servers", k)
			}
		}
	} else if len(kinds) != len(all) {
		t.Errorf("want every lock fault, got %v", kinds)
	}
	if _, err := (subject{applies: faults.Queues, kinds: []faults.Kind{faults.ClientPause}}).faults(); err == nil {
		t.Error("a lock fault for a queue: want refused")
	}
}
