package scenarios

import (
	"testing"
	"time"
)

func TestPacers(t *testing.T) {
	tests := []struct {
		name   string
		p      Pacer
		i      int
		want   time.Duration
		within time.Duration
	}{
		{"rush: everyone at the start", Rush{}, 999, 0, 0},
		{"steady: the 100th at 100/s", Steady{100}, 100, time.Second, 0},
		{"ramp to the same rate is steady", Ramp{100, 100, 1000}, 500, 5 * time.Second, 0},
		// A ramp from 100/s to 300/s over 1000 buyers lasts 2n/(r0+r1) = 5 s.
		{"ramp: the last buyer at the end", Ramp{100, 300, 1000}, 1000, 5 * time.Second, time.Millisecond},
		// Halfway in time, A = 100·2.5 + 200·6.25/10 = 375 buyers have arrived.
		{"ramp: halfway in time", Ramp{100, 300, 1000}, 375, 2500 * time.Millisecond, time.Millisecond},
		{"falling ramp: the last buyer at the end", Ramp{300, 100, 1000}, 1000, 5 * time.Second, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.p.Due(tt.i)
			if d := got - tt.want; d < -tt.within || d > tt.within {
				t.Errorf("Due(%d) = %s, want %s ± %s", tt.i, got, tt.want, tt.within)
			}
		})
	}
	// Arrivals never go back in time.
	var last time.Duration
	p := Ramp{300, 50, 1000}
	for i := range 1000 {
		at := p.Due(i)
		if at < last {
			t.Fatalf("Due(%d) = %s before Due(%d) = %s", i, at, i-1, last)
		}
		last = at
	}
}

func TestSalePacer(t *testing.T) {
	for _, tt := range []struct {
		s    Sale
		want Pacer
	}{
		{Sale{Buyers: 10}, Rush{}},
		{Sale{Buyers: 10, Rate: 5}, Steady{5}},
		{Sale{Buyers: 10, Rate: 5, RampTo: 50}, Ramp{5, 50, 10}},
	} {
		if got := tt.s.Pacer(); got != tt.want {
			t.Errorf("%+v: want %#v, got %#v", tt.s, tt.want, got)
		}
	}
}
