package scenarios

import (
	"testing"
	"time"
)

func TestArrival(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		r0, r1 float64
		i      int
		want   time.Duration
		within time.Duration
	}{
		{"constant: the 100th of 1000 at 100/s", 1000, 100, 0, 100, time.Second, 0},
		{"constant ramp-to equals rate", 1000, 100, 100, 500, 5 * time.Second, 0},
		// A ramp from 100/s to 300/s over 1000 buyers lasts 2n/(r0+r1) = 5 s.
		{"ramp: the last buyer at the end", 1000, 100, 300, 1000, 5 * time.Second, time.Millisecond},
		// Halfway in time, A = 100·2.5 + 200·6.25/10 = 375 buyers have arrived.
		{"ramp: halfway in time", 1000, 100, 300, 375, 2500 * time.Millisecond, time.Millisecond},
		{"falling ramp: the last buyer at the end", 1000, 300, 100, 1000, 5 * time.Second, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := arrival(tt.i, tt.n, tt.r0, tt.r1)
			if d := got - tt.want; d < -tt.within || d > tt.within {
				t.Errorf("arrival(%d) = %s, want %s ± %s", tt.i, got, tt.want, tt.within)
			}
		})
	}
	// Arrivals never go back in time.
	var last time.Duration
	for i := range 1000 {
		at := arrival(i, 1000, 300, 50)
		if at < last {
			t.Fatalf("arrival(%d) = %s before arrival(%d) = %s", i, at, i-1, last)
		}
		last = at
	}
}
