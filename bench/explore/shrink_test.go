package explore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stockbench/stockbench/results"
)

func drop() results.Sale {
	return results.Sale{Kind: results.LockSale, Scenario: "drop-sale", Design: "token", Faults: "failover",
		Settings: []results.Setting{{Name: "buyers", Value: "3"}, {Name: "stock", Value: "40"}, {Name: "ttl", Value: "1s"},
			{Name: "think", Value: "300ms"}, {Name: "waves", Value: "8"}}}
}

// TestShrinkSteps: each step makes its own dimension smaller and nothing else, and says
// when there is nothing left to make smaller (a sale of buyers has no waves, a failover
// no length).
func TestShrinkSteps(t *testing.T) {
	with := func(s results.Sale, name, v string) results.Sale {
		s = s.Clone()
		if name == "fault" {
			s.Faults = v
			return s
		}
		s.Set(name, v)
		return s
	}
	noWaves := drop()
	noWaves.Settings = slices.DeleteFunc(noWaves.Settings, func(x results.Setting) bool { return x.Name == "waves" })
	for _, c := range []struct {
		step string
		sale results.Sale
		name string
		want string // "" when the step cannot apply
	}{
		{"stock", drop(), "stock", "20"},
		{"buyers", drop(), "buyers", "1"},
		{"waves", drop(), "waves", "4"},
		{"waves", noWaves, "waves", ""},
		{"waves", with(drop(), "waves", "1"), "waves", ""},
		{"victim", drop(), "fault", "failover:nth=2"},
		{"fault length", drop(), "fault", ""}, // a failover takes as long as it takes
		{"fault length", with(drop(), "fault", "slow-work"), "fault", "slow-work:for=750ms"},
		{"fault length", with(drop(), "fault", "slow-work:p=0.1"), "fault", "slow-work:for=750ms:p=0.1"},
		{"clock jump", with(drop(), "fault", "clock-jump:by=2s"), "fault", "clock-jump:by=1s"},
		{"faults", with(drop(), "fault", "slow-work+redis-pause"), "fault", "slow-work"},
		{"faults", drop(), "fault", ""},
		{"apps", with(drop(), "apps", "4"), "apps", "2"},
		{"apps", with(drop(), "apps", "2"), "apps", "1"},
		{"apps", with(with(drop(), "apps", "2"), "fault", "app-blackhole"), "apps", ""}, // one cut off of two at least
		{"apps", with(with(drop(), "apps", "4"), "fault", "app-blackhole"), "apps", "2"},
		{"work", drop(), "think", "150ms"},
		{"work", with(drop(), "think", "uniform:1ms-3ms"), "think", ""},
		{"TTL, work and faults", with(with(drop(), "fault", "slow-work:for=1.5s"), "ttl", "2s"), "ttl", "1s"},
		{"TTL, work and faults", drop(), "ttl", ""},                    // not below a second
		{"TTL, work and faults", with(drop(), "ttl", "3s"), "ttl", ""}, // nor to 1.5 s
	} {
		i := slices.IndexFunc(Steps, func(s Step) bool { return s.Name == c.step })
		if i < 0 {
			t.Fatalf("no step %q", c.step)
		}
		got, ok := Steps[i].Apply(c.sale)
		if c.want == "" {
			if ok {
				t.Errorf("%s of %v: want nothing to shrink, got %v", c.step, c.sale, got)
			}
			continue
		}
		v := got.Get(c.name)
		if c.name == "fault" {
			v = got.Faults
		}
		if !ok || v != c.want {
			t.Errorf("%s of %v: want %s %s, got %v (%v)", c.step, c.sale.Settings, c.name, c.want, v, ok)
		}
	}
	if got, _ := Steps[slices.IndexFunc(Steps, func(s Step) bool { return s.Name == "TTL, work and faults" })].Apply(with(with(drop(), "fault", "slow-work:for=1.5s"), "ttl", "2s")); got.Get("think") != "150ms" || got.Faults != "slow-work:for=750ms" {
		t.Errorf("halving the timing: think %s, faults %s; want 150ms and slow-work:for=750ms", got.Get("think"), got.Faults)
	}
}

// TestShrink: a finding that needs at least 5 units and a holder working 200ms or more
// shrinks to exactly that, over every step (the fault it does not need to its floor,
// the other fault dropped), and the original sale is left as it was.
func TestShrink(t *testing.T) {
	s := drop()
	s.Faults = "slow-work+redis-pause"
	earns := func(_ context.Context, s results.Sale) (results.Run, bool) {
		var stock int
		for _, c := range s.Get("stock") {
			stock = stock*10 + int(c-'0')
		}
		think, _ := time.ParseDuration(s.Get("think"))
		return results.Run{}, stock >= 5 && think >= 200*time.Millisecond
	}
	small, _, tried := Shrink(context.Background(), s, results.Run{}, earns, time.Now().Add(time.Minute), 3)
	if small.Get("stock") != "5" || small.Get("buyers") != "1" || small.Get("waves") != "1" || small.Faults != "slow-work:nth=1:for=1.464843ms" || small.Get("think") != "300ms" {
		t.Errorf("smallest: stock %s buyers %s waves %s think %s faults %s", small.Get("stock"), small.Get("buyers"), small.Get("waves"), small.Get("think"), small.Faults)
	}
	if s.Get("stock") != "40" || s.Faults != "slow-work+redis-pause" || tried == 0 {
		t.Errorf("the original changed, or nothing was tried: %v, %d", s, tried)
	}
}
