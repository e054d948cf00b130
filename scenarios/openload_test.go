package scenarios

import (
	"testing"
	"time"

	"github.com/stockbench/stockbench/lockimpl"
)

// TestOpenLoad: buyers arrive at the rate, the warm-up's buyers are left out of the
// latencies, and a queue that builds because arrivals outpace the lock shows in the
// latencies, which count from each buyer's intended arrival.
func TestOpenLoad(t *testing.T) {
	t.Run("warm-up", func(t *testing.T) {
		s := FlashSale{Sale: Sale{Buyers: 300, Stock: 300, Rate: 1000, Warmup: 100 * time.Millisecond}}
		r := run(t, s, "lua")
		// Buyers 0..99 arrive in the first 100 ms; every buyer buys.
		if got := r.Latency["purchase"].Count; got != 200 {
			t.Errorf("purchases timed: %d, want 200 (300 less the 100 of the warm-up)", got)
		}
		if r.Oracle.Bought != 300 {
			t.Errorf("bought %d, want all 300: the warm-up's buyers still count for the oracles", r.Oracle.Bought)
		}
		if r.Duration < 299*time.Millisecond {
			t.Errorf("the sale took %s; 300 buyers at 1000/s take at least 299 ms to arrive", r.Duration)
		}
		if r.Params.Rate != 1000 || r.Params.Warmup != "100ms" {
			t.Errorf("params: %+v", r.Params)
		}
	})
	t.Run("overload shows in latency", func(t *testing.T) {
		// 40 buyers arrive over 390 ms; each holds the lock 50 ms, so the last buys at
		// 2 s at the earliest, 1.6 s after it arrived.
		s := FlashSale{Sale: Sale{Buyers: 40, Stock: 40, Rate: 100, Conns: 8}, Think: Fixed(50 * time.Millisecond), Retry: lockimpl.Retry{Interval: 2 * time.Millisecond, Timeout: 30 * time.Second}}
		r := run(t, s, "set-nx-ex")
		l := r.Latency["purchase"]
		if r.Oracle.Bought != 40 || l.Count != 40 {
			t.Fatalf("bought %d, timed %d; want 40", r.Oracle.Bought, l.Count)
		}
		if l.MaxUs < 1_500_000 {
			t.Errorf("worst purchase %s; want at least 1.5 s of queueing behind the lock", time.Duration(l.MaxUs)*time.Microsecond)
		}
	})
}

func TestOpenLoadValidation(t *testing.T) {
	for name, s := range map[string]FlashSale{
		"negative rate":   {Sale: Sale{Buyers: 1, Rate: -1}},
		"ramp, no rate":   {Sale: Sale{Buyers: 1, RampTo: 100}},
		"negative warmup": {Sale: Sale{Buyers: 1, Rate: 10, Warmup: -time.Second}},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
