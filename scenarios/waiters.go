package scenarios

import (
	"context"
	"sync"
	"time"
)

// waiters is where a lock sale's buyers sleep between tries: a buyer waiting for the lock
// is an entry of 16 bytes in a heap ordered by when it tries next, not a goroutine of
// 2 KB or more. One goroutine per application instance hands each buyer whose time has
// come to the instance's executor, which runs the try on a connection. That is what lets
// a million buyers wait at once within a gigabyte.
type waiters struct {
	mu   sync.Mutex
	heap []waiter
	wake chan struct{} // the earliest entry changed
	t0   time.Time
	x    *executor
}

// waiter is buyer i, due to try at due (from t0).
type waiter struct {
	due time.Duration
	i   int32
}

func newWaiters(t0 time.Time, x *executor) *waiters {
	return &waiters{wake: make(chan struct{}, 1), t0: t0, x: x}
}

// sleep has buyer i try again at due (from t0).
func (w *waiters) sleep(i int, due time.Duration) {
	w.mu.Lock()
	w.push(waiter{due, int32(i)})
	first := w.heap[0].i == int32(i)
	w.mu.Unlock()
	if first {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// run hands every buyer whose time has come to the executor, until stop is closed. Once
// ctx ends every sleeper is handed over at once, to end its wait.
func (w *waiters) run(ctx context.Context, stop <-chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	done := ctx.Done()
	var due []int32
	for {
		now := time.Since(w.t0)
		w.mu.Lock()
		for len(w.heap) > 0 && (w.heap[0].due <= now || ctx.Err() != nil) {
			due = append(due, w.pop().i)
		}
		next := time.Hour
		if len(w.heap) > 0 {
			next = w.heap[0].due - now
		}
		w.mu.Unlock()
		for _, i := range due { // outside the lock: the executors put sleepers back meanwhile
			w.x.wake(int(i))
		}
		due = due[:0]
		timer.Reset(next)
		select {
		case <-stop:
			return
		case <-done:
			done = nil // heard once; the loop then hands everyone over
		case <-w.wake:
		case <-timer.C:
		}
	}
}

// push and pop keep heap a binary min-heap by due (container/heap would box each entry).
func (w *waiters) push(e waiter) {
	h := append(w.heap, e)
	for j := len(h) - 1; j > 0; {
		p := (j - 1) / 2
		if h[p].due <= h[j].due {
			break
		}
		h[p], h[j] = h[j], h[p]
		j = p
	}
	w.heap = h
}

func (w *waiters) pop() waiter {
	h := w.heap
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for j := 0; ; {
		l, s := 2*j+1, j
		if l < n && h[l].due < h[s].due {
			s = l
		}
		if r := l + 1; r < n && h[r].due < h[s].due {
			s = r
		}
		if s == j {
			break
		}
		h[s], h[j] = h[j], h[s]
		j = s
	}
	w.heap = h
	return top
}
