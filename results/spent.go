package results

import (
	"fmt"
	"strings"
	"time"
)

// Spent is where one sale's wall time went, or, added up, many sales'. It measures the
// harness, not the sale, so a record does not keep it: the explorer reports it.
type Spent struct {
	// Servers is starting the sale's servers (or taking them from the pool), then
	// resetting them or stopping those a fault killed.
	Servers time.Duration `json:"servers_ns"`
	// SetUp is the design's set-up (an adapter's processes started), the faults' and
	// the stock's, and the connections warmed.
	SetUp time.Duration `json:"set_up_ns"`
	// Selling is the sale itself: the buyers, the holders' work, the faults.
	Selling time.Duration `json:"selling_ns"`
	// Judging is the final reads, the clean-up and the oracles.
	Judging time.Duration `json:"judging_ns"`
}

// Total is the sale's wall time.
func (s Spent) Total() time.Duration { return s.Servers + s.SetUp + s.Selling + s.Judging }

// Add adds o's times to s's.
func (s *Spent) Add(o Spent) {
	s.Servers += o.Servers
	s.SetUp += o.SetUp
	s.Selling += o.Selling
	s.Judging += o.Judging
}

// String is each part with its share of the total, as "servers 1.2s (10%), ...".
func (s Spent) String() string {
	total := s.Total()
	parts := []struct {
		name string
		d    time.Duration
	}{{"servers", s.Servers}, {"set-up", s.SetUp}, {"selling", s.Selling}, {"judging", s.Judging}}
	out := make([]string, len(parts))
	for i, p := range parts {
		share := 0.0
		if total > 0 {
			share = 100 * float64(p.d) / float64(total)
		}
		out[i] = fmt.Sprintf("%s %s (%.0f%%)", p.name, p.d.Round(time.Millisecond), share)
	}
	return strings.Join(out, ", ")
}
