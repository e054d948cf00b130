package results

import (
	"math"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// A timeline keeps at most timelinePoints samples, enough for a plot and few enough that
// results.json stays small, and about salesPerPoint sales per interval, so that a short
// sale's rate is not a comb of 0s and 1s.
const (
	timelinePoints = 100
	salesPerPoint  = 10
)

// Timeline turns the moments sales were confirmed (since the sale began) into cumulative
// sales at evenly spaced moments, from the first bucket to the last sale. It sorts at.
func Timeline(at []time.Duration) []Sample {
	if len(at) == 0 {
		return nil
	}
	slices.Sort(at)
	last := at[len(at)-1]
	points := min(timelinePoints, max(len(at)/salesPerPoint, 5))
	step := max(last/time.Duration(points), time.Millisecond)
	var out []Sample
	i := 0
	for t := step; ; t += step {
		for i < len(at) && at[i] <= t {
			i++
		}
		out = append(out, Sample{At: t, N: int64(i)})
		if i == len(at) {
			return out
		}
	}
}

// Rates turns a cumulative timeline into sales per second over each interval, plotted at
// the interval's end.
func Rates(tl []Sample) []Sample {
	out := make([]Sample, 0, len(tl))
	var prev Sample
	for _, s := range tl {
		if dt := (s.At - prev.At).Seconds(); dt > 0 {
			out = append(out, Sample{At: s.At, N: int64(math.Round(float64(s.N-prev.N) / dt))})
		}
		prev = s
	}
	return out
}

// Fairness is how evenly a sale served its buyers: Jain's index of their waits (1 when
// all waited alike, 1/n when one buyer took all the waiting) and the worst wait.
type Fairness struct {
	Jain    float64 `json:"jain_index"`
	WorstUs int64   `json:"worst_wait_us"`
	// Phase is the latency the waits were read from.
	Phase string `json:"phase"`
}

// FairnessOf computes Jain's index from the histogram of waits: (Σx)² / (n·Σx²), with
// each bucket's values taken at its midpoint, so it is as precise as the histogram.
func FairnessOf(phase Phase, l Latency) (Fairness, error) {
	h, err := l.Histogram()
	if err != nil {
		return Fairness{}, err
	}
	return Fairness{Jain: jain(h), WorstUs: h.Max(), Phase: phase.String()}, nil
}

func jain(h *hdrhistogram.Histogram) float64 {
	var n, sum, sq float64
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		x := float64(b.From+b.To) / 2
		c := float64(b.Count)
		n, sum, sq = n+c, sum+c*x, sq+c*x*x
	}
	if sq == 0 {
		return 1
	}
	return sum * sum / (n * sq)
}
