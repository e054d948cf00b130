package explore

import (
	"context"
	"testing"
	"time"
)

// TestLimitFollowsTheIdleCPU: the limit rises by one a step while the CPUs are idle
// enough and a sale waits for a slot, falls by a quarter when they are busy, and keeps
// within its floor and ceiling.
func TestLimitFollowsTheIdleCPU(t *testing.T) {
	for _, tc := range []struct {
		name               string
		limit, floor, ceil int
		running, waiting   int
		idle               float64
		want               int
	}{
		{"idle, a sale waits: one more", 8, 2, 32, 8, 1, 0.5, 9},
		{"idle, nobody waits: unchanged", 8, 2, 32, 3, 0, 0.9, 8},
		{"idle, at the ceiling: unchanged", 32, 2, 32, 32, 4, 0.9, 32},
		{"between the marks: unchanged", 8, 2, 32, 8, 1, 0.25, 8},
		{"busy: a quarter fewer", 12, 2, 32, 12, 1, 0.10, 9},
		{"busy, small: one fewer", 3, 1, 32, 3, 0, 0.0, 2},
		{"busy, at the floor: unchanged", 2, 2, 32, 2, 1, 0.0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimiter(tc.limit, tc.floor, tc.ceil)
			l.running, l.waiting = tc.running, tc.waiting
			l.step(tc.idle)
			if got := l.now(); got != tc.want {
				t.Errorf("limit %d after idle %.2f: %d, want %d", tc.limit, tc.idle, got, tc.want)
			}
			r := l.report()
			if r.Low != min(tc.limit, tc.want) || r.High != max(tc.limit, tc.want) || r.Start != tc.limit || r.Ceiling != tc.ceil {
				t.Errorf("report %+v, want from %d, %d to %d, ceiling %d", r, tc.limit, min(tc.limit, tc.want), max(tc.limit, tc.want), tc.ceil)
			}
		})
	}
}

// TestAcquireWaitsForTheLimit: a sale past the limit waits until one ends or the limit
// rises, and gives up when its context ends; a draw wider than the limit runs alone.
func TestAcquireWaitsForTheLimit(t *testing.T) {
	ctx := context.Background()
	l := newLimiter(2, 1, 4)
	if !l.acquire(ctx, 2) {
		t.Fatal("the first two slots refused")
	}
	got := make(chan bool, 1)
	go func() { got <- l.acquire(ctx, 1) }()
	select {
	case <-got:
		t.Fatal("a third sale ran with the limit at 2")
	case <-time.After(50 * time.Millisecond):
	}
	waitFor(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.waiting == 1 })
	l.step(0.9) // idle, and a sale waits: the limit rises to 3
	if !<-got {
		t.Fatal("the waiting sale did not run when the limit rose")
	}
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if l.acquire(cctx, 1) {
		t.Fatal("a fourth sale ran with the limit at 3")
	}
	l.release(3)
	if !l.acquire(ctx, 4) {
		t.Fatal("a draw of four did not run alone")
	}
	l.release(4)
}

// TestFollowReadsTheLoad: follow steps the limit by what Idle reads, once a step, and a
// reading that fails leaves it where it is.
func TestFollowReadsTheLoad(t *testing.T) {
	l := newLimiter(4, 1, 8)
	l.running, l.waiting = 4, 1
	reads := 0
	idle := func() (float64, bool) {
		reads++
		if reads%2 == 0 {
			return 0, false
		}
		return 0.9, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*limitStep+limitStep/2)
	defer cancel()
	l.follow(ctx, idle) // reads at 0 (discarded), 1 (fails), 2 (0.9), 3 (fails)
	if got := l.now(); got != 5 {
		t.Errorf("limit %d after %d readings, one of them counted: want 5", got, reads)
	}
}

// TestMachineIdle: the machine's idle share reads between 0 and 1.
func TestMachineIdle(t *testing.T) {
	idle := machineIdle()
	idle()
	time.Sleep(100 * time.Millisecond)
	share, ok := idle()
	if !ok {
		t.Skip("the CPU times cannot be read here")
	}
	if share < 0 || share > 1 {
		t.Errorf("idle share %v: want from 0 to 1", share)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 200 {
		if cond() {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the condition did not come")
}
