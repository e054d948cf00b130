package scenarios

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The clock never lets a buyer in before it is due, at a slow rate (the timer, then the
// sleeper, then the spin), at a fast one (sleeps of minSleep, buyers arriving together)
// and with the timer alone.
func TestClockNeverEarly(t *testing.T) {
	for _, tt := range []struct {
		name  string
		gap   time.Duration
		timer bool // the clock off Linux
	}{
		{"a buyer every 5 ms", 5 * time.Millisecond, false},
		{"a buyer every 400 µs", 400 * time.Microsecond, false},
		{"a buyer every 30 µs", 30 * time.Microsecond, false},
		{"a buyer every 2 ms, the timer alone", 2 * time.Millisecond, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			defer c.close()
			if tt.timer && c.fine != nil {
				c.fine.close()
				c.fine = nil
			}
			t0 := time.Now()
			for i := 1; i <= 40; i++ {
				due := time.Duration(i) * tt.gap
				if !c.until(context.Background(), t0, due, tt.gap) {
					t.Fatalf("wait %d: until gave up with no context ended", i)
				}
				if now := time.Since(t0); now < due {
					t.Fatalf("wait %d: back at %s, before its due time %s", i, now, due)
				}
			}
		})
	}
}

// A wait ends when its context does, in each of its parts.
func TestClockStopsWithTheContext(t *testing.T) {
	for _, far := range []time.Duration{time.Hour, coarse / 2, spinMost / 2} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		c := newClock()
		if c.until(ctx, time.Now(), far, 0) {
			t.Errorf("a wait of %s with its context ended said it waited", far)
		}
		c.close()
	}
}

// Every buyer is served once, in order of arrival, none before it is due, whatever
// how many arrive at once; and a stop leaves the unstarted ones a tail.
func TestFeedServesEveryBuyerOnce(t *testing.T) {
	for _, tt := range []struct {
		name    string
		p       Pacer
		n, w    int
		stopAt  int // the serve of this buyer stops the sale (-1: none)
		wantAll bool
	}{
		{"one worker, a buyer every 200 µs", Steady{5000}, 200, 1, -1, true},
		{"8 workers, a buyer every 100 µs", Steady{10000}, 400, 8, -1, true},
		{"64 workers, a ramp", Ramp{1000, 50000, 2000}, 2000, 64, -1, true},
		{"a rush", Rush{}, 5000, 16, -1, true},
		{"stopped at the 100th", Steady{20000}, 1000, 8, 100, false},
		{"a rush stopped at the 10th", Rush{}, 100000, 4, 10, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			served := make([]int, tt.n)
			from := -1
			t0 := time.Now()
			feed(ctx, tt.n, tt.w, tt.p, t0, func(_, i int, at time.Time) {
				if now := time.Now(); now.Before(at) || at != t0.Add(tt.p.Due(i)) {
					t.Errorf("buyer %d due at %s served at %s", i, at.Sub(t0), now.Sub(t0))
				}
				mu.Lock()
				served[i]++
				mu.Unlock()
				if i == tt.stopAt {
					cancel()
				}
			}, func(f int) { from = f })
			want := tt.n
			if !tt.wantAll {
				if from <= tt.stopAt || from >= tt.n {
					t.Fatalf("unstarted from %d, want a tail after the buyer that stopped it (%d) and before the end (%d)", from, tt.stopAt, tt.n)
				}
				want = from
			} else if from != -1 {
				t.Fatalf("unstarted from %d with no stop", from)
			}
			for i, k := range served {
				if k != 1 && i < want || k != 0 && i >= want {
					t.Fatalf("buyer %d served %d times (served: the first %d)", i, k, want)
				}
			}
		})
	}
}
