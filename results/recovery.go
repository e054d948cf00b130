package results

import "time"

// Recoveries is what became of the tasks a queue sale's workers died holding: how many
// deaths, how many of their tasks were delivered again and how many never were. How long
// each redelivery took is the run's "recovery" latency.
type Recoveries struct {
	Deaths      int `json:"deaths"`
	Redelivered int `json:"redelivered"`
	Never       int `json:"never"`
}

// Durations summarises ds as a latency histogram; ok is false when ds is empty.
func Durations(ds []time.Duration) (l Latency, ok bool) {
	if len(ds) == 0 {
		return Latency{}, false
	}
	h := newHistogram()
	for _, d := range ds {
		h.RecordValue(min(max(int64(d/time.Microsecond), histLowest), histHighest))
	}
	l, err := Summarize(h)
	return l, err == nil
}
