package faults

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
)

// ParseVerdicts reads what a design written outside Go documents, and For answers from
// it as from a built-in design's.
func TestParseVerdicts(t *testing.T) {
	v, err := ParseVerdicts("documented", map[string][]string{
		"none": {"SAFE"}, "client-pause": {"OVERSOLD", "LOST"}, "crash-holder": {"NOT-EXERCISED"},
	}, Locks)
	if err != nil {
		t.Fatal(err)
	}
	want := Verdicts{None: []oracle.Class{oracle.ClassSafe}, Under: map[Kind][]oracle.Class{
		ClientPause: {oracle.ClassOversold, oracle.ClassLost}, CrashHolder: {oracle.ClassNotExercised}}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %+v, want %+v", v, want)
	}
	for _, tc := range []struct {
		plan Plan
		want []oracle.Class
		ok   bool
	}{
		{nil, []oracle.Class{oracle.ClassSafe}, true},
		{Plan{{Kind: ClientPause}}, []oracle.Class{oracle.ClassOversold, oracle.ClassLost}, true},
		{Plan{{Kind: SlowWork}}, nil, false},
		{Plan{{Kind: ClientPause}, {Kind: SlowWork}}, nil, false},
	} {
		if got, ok := v.For(tc.plan); ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("For(%s) = %v, %v; want %v, %v", tc.plan, got, ok, tc.want, tc.ok)
		}
	}
	for _, tc := range []struct {
		in   map[string][]string
		a    Applies
		want string
	}{
		{map[string][]string{"none": {"FINE"}}, Locks, `documented.none: unknown class "FINE"`},
		{map[string][]string{"none": {}}, Locks, "documented.none: no class"},
		{map[string][]string{"worker-crash": {"LOST"}}, Locks, "documented.worker-crash: not a fault of locks sales"},
		{map[string][]string{"client-pause": {"SAFE"}}, Queues, "documented.client-pause: not a fault of queues sales"},
	} {
		if _, err := ParseVerdicts("documented", tc.in, tc.a); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error saying %q, got %v", tc.in, tc.want, err)
		}
	}
}
