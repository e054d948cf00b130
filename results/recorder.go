// Package results records what a run measured and keeps it: latency histograms per phase,
// and the versioned results.json that the report (package report) and the gates
// (package gate) read.
package results

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Phase is a part of a purchase whose latency is recorded.
type Phase int

// The phases, in the order a buyer goes through them.
const (
	Acquire  Phase = iota // first try until the lock is held
	Critical              // lock held: read, think, write
	Release               // the release command
	Purchase              // the whole purchase, from the buyer's start to its confirmed order
	Queue                 // a queued order, from when it was due to arrive to its fulfilment
	Recovery              // a queue worker's death holding a task, to the task's next delivery
	numPhases
)

var phaseNames = [numPhases]string{"acquire", "critical", "release", "purchase", "queue", "recovery"}

func (p Phase) String() string { return phaseNames[p] }

// Histogram range: 1µs to one hour, three significant digits.
const (
	histLowest  = 1
	histHighest = int64(time.Hour / time.Microsecond)
	histDigits  = 3
)

// Recorder holds latency histograms for every phase. Histograms take no lock of their
// own, so writers are spread over shards, each behind a mutex: recording is a lock, an
// add and an unlock, and allocates nothing.
type Recorder struct {
	shards []shard
}

type shard struct {
	mu sync.Mutex
	h  [numPhases]*hdrhistogram.Histogram
	_  [64]byte // keep neighbouring shards' mutexes off one cache line
}

// NewRecorder returns a recorder with n shards (at least one).
func NewRecorder(n int) *Recorder {
	r := &Recorder{shards: make([]shard, max(n, 1))}
	for i := range r.shards {
		for p := range r.shards[i].h {
			r.shards[i].h[p] = newHistogram()
		}
	}
	return r
}

func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histLowest, histHighest, histDigits)
}

// Record adds d to phase p; worker picks the shard, so a worker that always passes the
// same number never contends with itself. Values beyond the range are clamped to it.
func (r *Recorder) Record(worker int, p Phase, d time.Duration) {
	us := min(max(int64(d/time.Microsecond), 0), histHighest)
	s := &r.shards[uint(worker)%uint(len(r.shards))]
	s.mu.Lock()
	s.h[p].RecordValue(us)
	s.mu.Unlock()
}

// Histogram returns the shards of phase p merged into a new histogram, in microseconds.
func (r *Recorder) Histogram(p Phase) *hdrhistogram.Histogram {
	h := newHistogram()
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		h.Merge(s.h[p])
		s.mu.Unlock()
	}
	return h
}
