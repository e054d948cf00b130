package adapter

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// A process that speaks protocol 3 serves sale after sale: at a sale's end it is sent
// bye rather than its stdin's end, and kept warm for the next pool of the same adapter,
// which says hello to it again instead of starting a process. Starting the processes
// was most of a sale of a Go adapter's: 128 redsync processes (--conns 32, --apps 4)
// took 3.4 s of a 5.2 s sale and 5.4 s of CPU on two CPUs. A process a fault touched
// (any signal), one that broke, or one that does not answer bye is not kept.
//
// warm is the processes kept, by adapter; idle ones go after idleFor, and every one at
// Drain.
var warm = &warmth{idle: map[string][]warmProc{}}

// idleFor is how long a kept process waits for a sale before it is stopped: longer than
// the gaps between an exploration's sales, short enough that a run's last sale's
// processes do not outlive it by much.
const idleFor = 20 * time.Second

// warmMost is the most processes kept of one adapter.
const warmMost = 512

type warmth struct {
	mu      sync.Mutex
	idle    map[string][]warmProc
	sweeper bool // a goroutine is stopping what has idled for idleFor
}

type warmProc struct {
	pr    *proc
	since time.Time
}

// warmKey names the processes a pool may take: the same adapter, command and patience.
func warmKey(name string, argv []string, patience time.Duration) string {
	return name + "\x00" + patience.String() + "\x00" + strings.Join(argv, "\x00")
}

// take is a kept process of key that is still alive, or nil.
func (w *warmth) take(key string) *proc {
	w.mu.Lock()
	defer w.mu.Unlock()
	for list := w.idle[key]; len(list) > 0; list = w.idle[key] {
		pr := list[len(list)-1].pr
		w.idle[key] = list[:len(list)-1]
		if pr.err() == nil {
			return pr
		}
	}
	return nil
}

// keep says bye to pr, and keeps it if it answers in time; else it is killed. It
// reports whether pr was kept.
func (w *warmth) keep(key string, pr *proc) bool {
	if pr.protocol < 3 || pr.signaled.Load() || pr.struck.Load() || pr.err() != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), goodbye)
	defer cancel()
	if r, err := pr.call(ctx, request{Op: "bye"}); err != nil || !r.OK {
		return false
	}
	pr.stderr.Store(&tail{}) // what it writes while kept is nobody's sale's
	pr.stepped.Store(nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.idle[key]) >= warmMost {
		return false
	}
	w.idle[key] = append(w.idle[key], warmProc{pr, time.Now()})
	if !w.sweeper {
		w.sweeper = true
		go w.sweep()
	}
	return true
}

// sweep stops the processes kept for idleFor, until none is kept.
func (w *warmth) sweep() {
	for {
		time.Sleep(idleFor / 4)
		var old []*proc
		w.mu.Lock()
		for key, list := range w.idle {
			keep := slices.DeleteFunc(list, func(wp warmProc) bool {
				if time.Since(wp.since) < idleFor {
					return false
				}
				old = append(old, wp.pr)
				return true
			})
			if len(keep) == 0 {
				delete(w.idle, key)
			} else {
				w.idle[key] = keep
			}
		}
		done := len(w.idle) == 0
		if done {
			w.sweeper = false
		}
		w.mu.Unlock()
		stopAll(old)
		if done {
			return
		}
	}
}

// drain stops every kept process.
func (w *warmth) drain() {
	var all []*proc
	w.mu.Lock()
	for key, list := range w.idle {
		for _, wp := range list {
			all = append(all, wp.pr)
		}
		delete(w.idle, key)
	}
	w.mu.Unlock()
	stopAll(all)
}

// kept counts the processes kept.
func (w *warmth) kept() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, list := range w.idle {
		n += len(list)
	}
	return n
}

// stopAll ends kept processes, all at once.
func stopAll(ps []*proc) {
	var wg sync.WaitGroup
	for _, pr := range ps {
		wg.Go(pr.end)
	}
	wg.Wait()
}

// Drain stops every adapter process kept between sales. The command calls it once its
// sales are done; a process left would end anyway once this one exits (its stdin
// closes), and an idle one after idleFor.
func Drain() { warm.drain() }
