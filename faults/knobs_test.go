package faults

import (
	"slices"
	"testing"
)

// TestKnobs: each fault's knobs are read off its entry: a victim's fault has nth, one
// that lasts has for, a clock jump goes by, a server fault that takes as long as it takes
// has no length, server-errors and redis-restart choose a mode and a persistence.
func TestKnobs(t *testing.T) {
	keys := func(k Kind) []string {
		s, _ := Lookup(k)
		var out []string
		for _, kb := range s.Knobs() {
			out = append(out, kb.Key)
		}
		return out
	}
	for _, c := range []struct {
		kind Kind
		want []string
	}{
		{SlowWork, []string{"nth", "for", "p"}},
		{CrashHolder, []string{"nth", "p"}},
		{CrashAcquire, []string{"nth"}},
		{Failover, []string{"nth"}},
		{RedisRestart, []string{"nth", "persist"}},
		{ServerErrors, []string{"nth", "for", "mode"}},
		{ClockJump, []string{"nth", "by"}},
		{WorkerCrash, []string{"nth", "count", "p"}},
		{NetLatency, nil},
		{LatencySpike, []string{"p"}},
	} {
		if got := keys(c.kind); !slices.Equal(got, c.want) {
			t.Errorf("%s: knobs %v, want %v", c.kind, got, c.want)
		}
	}
	s, _ := Lookup(ServerErrors)
	if k := s.Knobs()[2]; !slices.Equal(k.Choices, []string{ModeOOM, ModeReadonly, ModeLoading}) || k.Shrinks {
		t.Errorf("server-errors' mode: %+v", k)
	}
	if got := Explorable(Locks, false); !slices.Contains(got, RollingRestart) || slices.Contains(got, SentinelKill) || slices.Contains(got, WorkerCrash) {
		t.Errorf("Explorable(Locks, false) = %v: want the opt-in faults, not Sentinel's nor a queue's", got)
	}
}
