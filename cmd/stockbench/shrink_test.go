package main

import (
	"slices"
	"testing"
)

// TestShrinkSteps: each step halves its own setting and nothing else, and says when
// there is nothing left to halve (a sale of buyers has no waves).
func TestShrinkSteps(t *testing.T) {
	drop := []string{"run", "--scenario", "drop-sale", "--lock", "token", "--fault", "failover", "--buyers", "3", "--stock", "40", "--ttl", "1s", "--waves", "8"}
	for _, c := range []struct {
		step string
		args []string
		flag string
		want string // "" when the step cannot apply
	}{
		{"stock", drop, "--stock", "20"},
		{"buyers", drop, "--buyers", "1"},
		{"waves", drop, "--waves", "4"},
		{"waves", []string{"run", "--lock", "token", "--buyers", "3"}, "--waves", ""},
		{"waves", withFlag(slices.Clone(drop), "--waves", "1"), "--waves", ""},
		{"victim", drop, "--fault", "failover:nth=2"},
		{"fault length", drop, "--fault", ""}, // a failover has no length
	} {
		i := slices.IndexFunc(steps, func(s step) bool { return s.name == c.step })
		if i < 0 {
			t.Fatalf("no step %q", c.step)
		}
		got, ok := steps[i].apply(slices.Clone(c.args))
		if c.want == "" {
			if ok {
				t.Errorf("%s of %v: want nothing to halve, got %v", c.step, c.args, got)
			}
			continue
		}
		if !ok || flagValue(got, c.flag) != c.want {
			t.Errorf("%s of %v: want %s %s, got %v", c.step, c.args, c.flag, c.want, got)
		}
	}
}
