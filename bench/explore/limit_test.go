package explore

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestLimitFollowsTheIdleCPU: the limit rises by an eighth (one at least) a step while
// the CPUs are idle enough and a sale waits for a slot, falls by a quarter when they
// were busy over the last few steps (not one), and keeps within its floor and ceiling.
func TestLimitFollowsTheIdleCPU(t *testing.T) {
	for _, tc := range []struct {
		name               string
		limit, floor, ceil int
		running, waiting   int
		idle, recent       float64
		want               int
	}{
		{"idle, a sale waits: one more", 8, 2, 32, 8, 1, 0.5, 0.5, 9},
		{"idle, a sale waits, many running: an eighth more", 24, 2, 32, 24, 1, 0.5, 0.5, 27},
		{"idle, nobody waits: unchanged", 8, 2, 32, 3, 0, 0.9, 0.9, 8},
		{"idle, at the ceiling: unchanged", 32, 2, 32, 32, 4, 0.9, 0.9, 32},
		{"idle, near the ceiling: up to it", 30, 2, 32, 30, 4, 0.9, 0.9, 32},
		{"between the marks: unchanged", 8, 2, 32, 8, 1, 0.25, 0.25, 8},
		{"one busy step among idle ones: unchanged", 12, 2, 32, 12, 1, 0.05, 0.30, 12},
		{"busy: a quarter fewer", 12, 2, 32, 12, 1, 0.10, 0.10, 9},
		{"busy before, idle now: a quarter fewer", 12, 2, 32, 12, 1, 0.5, 0.12, 9},
		{"busy, small: one fewer", 3, 1, 32, 3, 0, 0.0, 0.0, 2},
		{"busy, at the floor: unchanged", 2, 2, 32, 2, 1, 0.0, 0.0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLimiter(tc.limit, tc.floor, tc.ceil)
			l.running, l.waiting = tc.running, tc.waiting
			l.step(tc.idle, tc.recent)
			if got := l.now(); got != tc.want {
				t.Errorf("limit %d after idle %.2f (recent %.2f): %d, want %d", tc.limit, tc.idle, tc.recent, got, tc.want)
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
	l.step(0.9, 0.9) // idle, and a sale waits: the limit rises to 3
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

// TestRecentIsTheMeanOfTheLastSteps: one busy reading among idle ones is averaged away;
// busy readings in a row are not.
func TestRecentIsTheMeanOfTheLastSteps(t *testing.T) {
	var r recent
	for i, tc := range []struct{ share, want float64 }{
		{0.6, 0.6},
		{0.0, 0.3},
		{0.6, 0.4},
		{0.05, 0.2167}, // 0.0, 0.6 and 0.05: the first reading has left
		{0.05, 0.2333},
		{0.05, 0.05},
	} {
		if got := r.add(tc.share); math.Abs(got-tc.want) > 1e-3 {
			t.Errorf("reading %d (%.2f): mean %.4f, want %.4f", i, tc.share, got, tc.want)
		}
	}
}

// TestMachineIdle: the machine's idle share reads between 0 and 1.
func TestMachineIdle(t *testing.T) {
	idle := MachineIdle()
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
