package explore

import (
	"context"
	"runtime"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
)

// Idle reads the share of the machine's CPU time left idle since its last call, from 0
// to 1; ok is false when it cannot be read.
type Idle func() (share float64, ok bool)

// The limiter's rule. Drawn sales mostly wait on their holders' work, their faults and
// their TTLs, so more of them can run at once than there are CPUs; how many is read off
// the machine rather than guessed: the limit rises by an eighth (one at least) a step
// while at least raiseIdle of the CPU time was idle and a sale waited for a slot, and
// falls by a quarter once less than lowerIdle was idle over the last smoothSteps. The
// idle margin is kept so that a sale's timing-bound verdict (a buyer's patience, a
// holder's lease) is never a starved CPU's; the falls follow the mean of a few steps
// because sales start in bursts (a region's reruns together, each starting its servers),
// and a limit cut by every burst left half the CPU idle over a run.
const (
	raiseIdle   = 0.35
	lowerIdle   = 0.15
	limitStep   = time.Second
	smoothSteps = 3
)

// limiter lets up to limit sales run at once, limit following the load between floor
// and ceiling (Config.Parallel).
type limiter struct {
	mu               sync.Mutex
	running, waiting int
	limit, start     int
	floor, ceiling   int
	low, high        int           // the limit's range so far
	changed          chan struct{} // closed, and replaced, when a slot frees or the limit moves
}

// newLimiter starts at start sales at once, within floor and ceiling.
func newLimiter(start, floor, ceiling int) *limiter {
	floor = min(max(floor, 1), ceiling)
	start = min(max(start, floor), ceiling)
	return &limiter{limit: start, start: start, floor: floor, ceiling: ceiling, low: start, high: start, changed: make(chan struct{})}
}

// startLimit is where the limit starts: four sales per CPU, the fixed default that
// drawn sales kept busy on two CPUs.
func startLimit() int { return 4 * runtime.NumCPU() }

// acquire waits for n slots (a draw's sales, one per design, start together), or for
// ctx's end (false). n slots are granted whatever the limit when no sale is running, so
// that a draw wider than the limit still runs.
func (l *limiter) acquire(ctx context.Context, n int) bool {
	l.mu.Lock()
	l.waiting++
	for l.running > 0 && l.running+n > l.limit {
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			l.mu.Lock()
			l.waiting--
			l.mu.Unlock()
			return false
		}
		l.mu.Lock()
	}
	l.waiting--
	l.running += n
	l.mu.Unlock()
	return true
}

// release frees n slots.
func (l *limiter) release(n int) {
	l.mu.Lock()
	l.running -= n
	l.wake()
	l.mu.Unlock()
}

// wake tells the waiters something changed; l.mu is held.
func (l *limiter) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// step moves the limit by the idle share the last step measured (idle) and the mean
// share of the last smoothSteps (recent).
func (l *limiter) step(idle, recent float64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case recent < lowerIdle:
		l.limit = max(l.floor, l.limit-max(1, l.limit/4))
	case idle >= raiseIdle && l.waiting > 0 && l.running+1 > l.limit:
		l.limit = min(l.ceiling, l.limit+max(1, l.limit/8))
	default:
		return
	}
	l.low, l.high = min(l.low, l.limit), max(l.high, l.limit)
	l.wake()
}

// now is the limit now.
func (l *limiter) now() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limit
}

// report is the limit's range so far.
func (l *limiter) report() Limit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Limit{Start: l.start, Low: l.low, High: l.high, Ceiling: l.ceiling}
}

// follow steps l every limitStep by what idle reads, and the mean of its last
// smoothSteps readings, until ctx ends; a reading that fails leaves the limit where it
// is.
func (l *limiter) follow(ctx context.Context, idle Idle) {
	t := time.NewTicker(limitStep)
	defer t.Stop()
	idle() // the first reading starts the interval
	var w recent
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if share, ok := idle(); ok {
				l.step(share, w.add(share))
			}
		}
	}
}

// recent keeps the last smoothSteps readings of the idle share.
type recent struct {
	last [smoothSteps]float64
	n    int
}

// add counts a reading and returns the mean of the last smoothSteps (of all, while
// fewer were read).
func (r *recent) add(share float64) float64 {
	r.last[r.n%smoothSteps] = share
	r.n++
	k := min(r.n, smoothSteps)
	sum := 0.0
	for _, v := range r.last[:k] {
		sum += v
	}
	return sum / float64(k)
}

// MachineIdle is an Idle of the whole machine's CPUs, the Redis servers' and the
// adapters' processes counted with the explorer's own: each call says the share of CPU
// time idle since the call before (false on the first, or where the system says none).
func MachineIdle() Idle {
	var lastIdle, lastTotal float64
	return func() (float64, bool) {
		ts, err := cpu.Times(false)
		if err != nil || len(ts) == 0 {
			return 0, false
		}
		idle, total := ts[0].Idle+ts[0].Iowait, ts[0].Total()
		di, dt := idle-lastIdle, total-lastTotal
		lastIdle, lastTotal = idle, total
		if dt <= 0 {
			return 0, false
		}
		return min(max(di/dt, 0), 1), true
	}
}
