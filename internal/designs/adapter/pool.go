package adapter

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stockbench/stockbench/lockimpl"
)

// ErrBroken marks an error of the adapter itself, not of Redis: it exited, wrote
// garbage, answered an id nobody asked, or missed a deadline. The sale stops on it.
var ErrBroken = lockimpl.ErrBroken

// brokenError is an adapter's failure: its text names the adapter and what it did, and
// it is ErrBroken.
type brokenError struct{ msg string }

func (e brokenError) Error() string        { return e.msg }
func (e brokenError) Is(target error) bool { return target == ErrBroken }

// pool is the processes of one adapter for one sale. A process is taken for a request
// and given back after it, or after the release of the lease it granted.
type pool struct {
	name     string
	key      string // its processes' in the warm cache
	argv     []string
	patience time.Duration // how long a call waits for its reply (Config.Patience)
	hello    request
	stderr   *tail

	idle    chan *proc
	mu      sync.Mutex
	all     []*proc
	said    *reply // the first process's answer to hello: what the adapter supports, its version
	stopped bool
	// quit closes when stop begins; pending counts the processes starting and the struck
	// processes waiting out their grace, which stop waits for: a successor starting as
	// the sale ended outlived the sale by its interpreter's start-up.
	quit    chan struct{}
	pending sync.WaitGroup
	// stepped, for a sale that strikes at a step (queueimpl.Sale.Stepped), hears each
	// report and says whether to strike the process that made it.
	stepped func(step, where string) (grace time.Duration, strike bool)
	// supervised: a process that exited of its own accord (exitedByItself) is replaced,
	// as a supervisor restarts a queue's worker, rather than broken (a queue's pool);
	// crashes counts the replaced ones that crashed, at most maxCrashes a sale.
	supervised bool
	crashes    atomic.Int64
}

// maxCrashes is how many crashed processes a supervised pool of size replaces in one
// sale: a library's worker may die of a failover's connection error, once or twice a
// process, but an adapter that crashes again and again is broken, not supervised.
func maxCrashes(size int) int64 { return int64(2*size + 2) }

// supervises reports whether pr, found gone, is the supervisor's to restart (restart):
// a supervised pool's process that exited of its own accord, crashed within the budget.
func (p *pool) supervises(pr *proc) bool {
	return p.supervised && pr.exitedByItself(p.crashes.Load() < maxCrashes(cap(p.idle)))
}

// newPool starts size processes of argv, a few at a time, and says hello to each. Two
// per CPU at once: 64 interpreters started together on two CPUs took their siblings' start-up
// into each one's hello deadline (node-redis's, under make test, past 10 s).
func newPool(ctx context.Context, name string, argv []string, patience time.Duration, size int, hello request,
	stepped func(step, where string) (time.Duration, bool)) (*pool, error) {
	p := &pool{name: name, key: warmKey(name, argv, patience), argv: argv, patience: patience, hello: hello, stderr: &tail{}, idle: make(chan *proc, size),
		stepped: stepped, quit: make(chan struct{})}
	errs := make([]error, size)
	starting := make(chan struct{}, 2*runtime.NumCPU())
	var wg sync.WaitGroup
	for i := range size {
		wg.Go(func() {
			starting <- struct{}{}
			defer func() { <-starting }()
			errs[i] = p.add(ctx, false)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			p.stop()
			return nil, p.broken(err)
		}
	}
	return p, nil
}

// add puts one more process in the pool: unless fresh is set, one kept from an earlier
// sale when there is one that takes this sale's hello, else a fresh one; a stopped pool
// adds none.
func (p *pool) add(ctx context.Context, fresh bool) error {
	var heard func(*proc, string, string)
	if p.stepped != nil {
		heard = p.heard
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return errDead
	}
	p.pending.Add(1)
	p.mu.Unlock()
	defer p.pending.Done()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.quit: // once the sale is over, a hello is not waited for
			cancel()
		case <-ctx.Done():
		}
	}()
	var pr *proc
	var said reply
	err := errDead
	if !fresh {
		pr = warm.take(p.key)
	}
	if pr != nil {
		said, err = pr.greet(ctx, p.hello, p.stderr, heard) // it kills one that will not
	}
	if err != nil {
		pr, said, err = start(ctx, p.name, p.argv, p.patience, p.hello, p.stderr, heard)
	}
	select {
	case <-p.quit:
		if err == nil {
			pr.kill()
		}
		return errDead
	default:
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped { // stop began after the check above: it is waiting for this add
		pr.kill()
		return errDead
	}
	if p.said == nil {
		p.said = &said
	}
	p.all = append(p.all, pr)
	p.idle <- pr
	return nil
}

// get takes an idle process, waiting for one as a request waits for a PHP-FPM worker.
// Once a process broke, every get fails: the sale stops.
func (p *pool) get(ctx context.Context) (*proc, error) {
	for {
		select {
		case pr := <-p.idle:
			if pr, err := p.taken(pr); err != errStruck {
				return pr, err
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// busy is how long a try waits for an idle process before it counts as a failed try.
// Holders keep their processes until they release; a try that waited for one for good
// while holding one of the sale's connection slots could keep the holders from the
// connections they need to finish and release: a deadlock. A busy pool is a busy lock.
const busy = 50 * time.Millisecond

// getSoon is get for at most busy; no process by then is lockimpl.ErrNotAcquired. An
// idle process is taken at once, without a timer: the common case, once per try.
func (p *pool) getSoon(ctx context.Context) (*proc, error) {
	select {
	case pr := <-p.idle:
		if pr, err := p.taken(pr); err != errStruck {
			return pr, err
		}
	default:
	}
	t := time.NewTimer(busy)
	defer t.Stop()
	for {
		select {
		case pr := <-p.idle:
			if pr, err := p.taken(pr); err != errStruck {
				return pr, err
			}
		case <-t.C:
			return nil, lockimpl.ErrNotAcquired
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// errStruck: the process taken was struck by a fault (a deploy's SIGTERM) while idle;
// it leaves the pool, and a fresh one takes its place (terminate).
var errStruck = errors.New("struck by a fault")

// taken checks a process just taken from the pool: a broken one goes back, for the next
// caller to find broken too, and its failure is the adapter's.
func (p *pool) taken(pr *proc) (*proc, error) {
	if pr.struck.Load() {
		return nil, errStruck
	}
	if p.supervises(pr) {
		p.restart(pr, pr.err())
		return nil, errStruck // the caller takes another
	}
	if err := pr.err(); err != nil {
		p.idle <- pr
		return nil, p.broken(err)
	}
	return pr, nil
}

// every reports whether ok holds for every process of the pool.
func (p *pool) every(ok func(*proc) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.all {
		if !ok(pr) {
			return false
		}
	}
	return true
}

// put gives pr back, unless it broke; a process a fault killed is replaced.
func (p *pool) put(pr *proc) { p.idle <- pr }

// terminate sends pr what a deploy sends: SIGTERM to its group, and SIGKILL once grace
// has passed if it is still there; a fresh process then takes its place. The channel
// returned closes once it is gone. A pool stopping meanwhile ends pr as it ends the
// others, and starts no successor.
func (p *pool) terminate(pr *proc, grace time.Duration) <-chan struct{} {
	pr.struck.Store(true)
	pr.paused.Store(true) // a shutting-down process's calls are its own affair, not a deadline's
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return pr.done
	}
	p.pending.Add(1)
	p.mu.Unlock()
	pr.signal(syscall.SIGTERM)
	go func() {
		defer p.pending.Done()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-pr.done:
		case <-t.C:
		case <-p.quit: // stop ends pr with the others
			return
		}
		p.replace(context.Background(), pr)
	}()
	return pr.done
}

// heard is a process's report that its worker reached step, holding the task of order:
// struck, it is sent what a deploy sends, at once, while it stays at the step.
func (p *pool) heard(pr *proc, step, order string) {
	where := "holding no task"
	if order != "" {
		where = "holding order " + order
	}
	if grace, strike := p.stepped(step, where); strike {
		p.terminate(pr, grace)
	}
}

// replace kills pr, as a fault kills a holder, and starts another in its place: a
// fresh process, as a supervisor starts one, never a kept one. How soon the successor
// is up is part of what the fault does to some libraries: a Celery worker restores a
// dead worker's messages as it starts, only those older than the visibility timeout,
// and a successor taken warm in milliseconds found none yet (worker-crash: LOST 4 of 10
// draws where fresh successors had restored them in all 10).
func (p *pool) replace(ctx context.Context, pr *proc) error {
	p.drop(pr)
	if err := p.add(context.WithoutCancel(ctx), true); err != nil && !errors.Is(err, errDead) {
		return p.broken(err)
	}
	return nil
}

// drop kills pr and takes it out of the pool.
func (p *pool) drop(pr *proc) {
	pr.kill()
	p.mu.Lock()
	p.all = slices.DeleteFunc(p.all, func(o *proc) bool { return o == pr })
	p.mu.Unlock()
}

// restart replaces pr, which exited of its own accord (its failure err), with a fresh
// process, as a supervisor restarts a worker, and says so in the adapter's log. A
// successor that cannot start yet (it cannot connect while a failover is under way: no
// master known) is started again, restartTries times restartEvery apart; one that never
// does leaves the pool a process short, and its failure is the adapter's.
func (p *pool) restart(pr *proc, err error) error {
	if !pr.cleanExit.Load() {
		p.crashes.Add(1)
	}
	fmt.Fprintf(p.stderr, "stockbench: a process exited of its own accord (%v); a fresh one takes its place\n", err)
	p.drop(pr)
	for try := 1; ; try++ {
		err := p.add(context.Background(), true)
		switch {
		case err == nil || errors.Is(err, errDead):
			return nil
		case try == restartTries:
			return p.broken(err)
		}
		select {
		case <-time.After(restartEvery):
		case <-p.quit:
			return nil
		}
	}
}

// A restarted process's successor that fails to start is tried again this many times,
// this far apart: 10 s, a Sentinel failover's few seconds with room to spare.
const (
	restartTries = 10
	restartEvery = time.Second
)

// broken wraps a process's failure as the adapter's.
func (p *pool) broken(err error) error {
	if errors.Is(err, ErrBroken) {
		return err
	}
	return brokenError{fmt.Sprintf("adapter %s", firstLine(err))}
}

// pauseAll stops every process of the pool (SIGSTOP) and continues each at until: a
// stop-the-world pause of the application instance. A process a fault signaled is never
// kept for another sale. It returns how many it stopped.
func (p *pool) pauseAll(until time.Time) int {
	p.mu.Lock()
	all := slices.Clone(p.all)
	p.mu.Unlock()
	for _, pr := range all {
		pr.pause()
		time.AfterFunc(time.Until(until), pr.resume)
	}
	return len(all)
}

// stop ends every process of the pool: one that speaks protocol 3 and no fault touched
// is sent bye and kept for the next sale (warm); the others' stdin closes, which tells
// them the sale is over (an adapter may clean up after itself), they get a moment to
// exit, and what is left is killed, with its group. When it returns, no process of the
// pool serves it, a struck one's successor included.
func (p *pool) stop() {
	p.mu.Lock()
	if !p.stopped {
		p.stopped = true
		close(p.quit)
	}
	p.mu.Unlock()
	p.pending.Wait()
	p.mu.Lock()
	all := slices.Clone(p.all)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range all {
		wg.Go(func() {
			if !warm.keep(p.key, pr) {
				pr.end()
			}
		})
	}
	wg.Wait()
}

// end ends a process that serves no sale: its stdin closes, which tells it the sale is
// over (an adapter may clean up after itself), and what is left after goodbye is killed
// with its group.
func (pr *proc) end() {
	pr.resume() // a process stopped by a fault cannot read its EOF
	pr.stdin.Close()
	select {
	case <-pr.done:
	case <-time.After(goodbye):
	}
	pr.kill()
}

// goodbye is how long a process has to exit once its stdin is closed: long enough for
// an adapter to delete its keys on a loaded machine (RQ's, a few hundred, took over a
// second under make test).
const goodbye = 3 * time.Second

// can reports whether the adapter said it supports what.
func (p *pool) can(what string) bool { return slices.Contains(p.said.Supports, what) }

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
