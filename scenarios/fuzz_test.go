package scenarios

import (
	"math"
	"testing"
	"time"
)

// FuzzParseThink: any text is a think-time distribution or one error, never a panic; a
// distribution reads back from its written form as itself, and draws none below zero.
func FuzzParseThink(f *testing.F) {
	for _, s := range []string{"2ms", "0", "uniform:1ms-3ms", "longtail:1ms,1500ms,0.01", "uniform:3ms-1ms", "longtail:1ms,2ms,NaN",
		"gaussian:1ms", "fixed:-1s", "uniform:-", "longtail:,,", "2562047h47m16.854775807s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThink(s)
		if err != nil {
			return
		}
		back, err := ParseThink(th.String())
		if err != nil || back != th {
			t.Fatalf("%q parsed as %+v, written %q, read back as %+v, %v", s, th, th.String(), back, err)
		}
		for buyer := range 100 {
			if d := th.Draw(1, buyer); d < 0 {
				t.Fatalf("%q drew %s for buyer %d", s, d, buyer)
			}
		}
	})
}

// FuzzSaleSettings: any numbers a user can give a sale either fail Validate or give a
// sale whose defaults validate too and whose footprint is a positive estimate.
func FuzzSaleSettings(f *testing.F) {
	f.Add(100, int64(30), int64(time.Second), int64(20*time.Millisecond), int64(10*time.Second), 32, 0.0, 0.0, int64(0))
	f.Add(1, int64(0), int64(0), int64(0), int64(0), 0, 1e9, 0.0, int64(-1))
	f.Add(-1, int64(-1), int64(-1), int64(-1), int64(-1), -1, -1.0, 5.0, int64(1))
	f.Add(10, int64(1), int64(0), int64(0), int64(0), 0, math.NaN(), 0.0, int64(0))
	f.Add(10, int64(1), int64(0), int64(0), int64(0), 0, math.Inf(1), 0.0, int64(0))
	f.Fuzz(func(t *testing.T, buyers int, stock, ttl, interval, timeout int64, conns int, rate, rampTo float64, warmup int64) {
		s := FlashSale{Sale: Sale{Buyers: buyers, Stock: stock, Conns: conns, Rate: rate, RampTo: rampTo, Warmup: time.Duration(warmup)}, TTL: time.Duration(ttl)}
		s.Retry.Interval, s.Retry.Timeout = time.Duration(interval), time.Duration(timeout)
		if s.Validate() != nil {
			return
		}
		if err := s.WithDefaults().Validate(); err != nil {
			t.Fatalf("%+v validates, its defaults do not: %v", s, err)
		}
		if !finite(s.Rate) || !finite(s.RampTo) {
			t.Fatalf("a rate of %g (ramp to %g) validates", s.Rate, s.RampTo)
		}
		if s.Rate > 0 {
			for _, i := range []int{0, s.Buyers / 2, s.Buyers - 1} {
				if at := s.Pacer().Due(i); at < 0 {
					t.Fatalf("buyer %d of %d arrives at %s", i, s.Buyers, at)
				}
			}
		}
	})
}
