package adapter

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// helloDeadline is how long an adapter may take to answer hello (see PROTOCOL.md); its
// other calls have Config.Patience. It counts from the process's start, interpreter and
// imports included, on a machine that may be starting many: four containers each
// starting its pool of Node processes on two CPUs took one past 10 s.
const helloDeadline = 30 * time.Second

// errDead is what a call to a process that was killed, or that died, returns.
var errDead = errors.New("the adapter process is gone")

// proc is one process of an adapter: requests go to its stdin, replies come from its
// stdout, matched by id; its stderr is kept, the last of it, for errors and the record.
type proc struct {
	name     string        // the adapter's, for errors
	patience time.Duration // how long a call but hello waits for its reply
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	mu       sync.Mutex // guards stdin and pending
	nextID   int64
	wait     map[int64]chan reply
	// broken is why the process can no longer be trusted: it exited, wrote garbage or
	// answered an id nobody asked; set once.
	broken atomic.Pointer[error]
	done   chan struct{} // closed when the process has exited and its output is read
	// stderr is the tail of the sale the process serves: a process kept between sales
	// (warm) writes to the next one's.
	stderr atomic.Pointer[tail]
	// paused is set while the process is stopped by a fault: its calls wait past the
	// deadline.
	paused atomic.Bool
	killed atomic.Bool
	// struck is set once a fault sent the process a deploy's SIGTERM: its exit, and the
	// calls it leaves unanswered, are the fault's doing.
	struck atomic.Bool
	// gone is set once it exited; cleanExit when it exited 0 or by a SIGKILL of its
	// own (Laravel's worker past its --timeout); answered counts its replies, hello's
	// included.
	gone, cleanExit atomic.Bool
	answered        atomic.Int64
	// signaled is set once the process was sent any signal (a fault's pause, crash or
	// deploy): it is not kept for another sale.
	signaled atomic.Bool
	// protocol is the version its last hello was answered in: from 3 on, it may serve
	// another sale after bye.
	protocol int
	// stepped, when set, hears the process's reports of the steps it reached.
	stepped atomic.Pointer[func(step, order string)]
}

// start starts argv in a process group of its own and says hello.
func start(ctx context.Context, name string, argv []string, patience time.Duration, hello request, stderr *tail, stepped func(*proc, string, string)) (*proc, reply, error) {
	p, err := spawn(name, argv, patience)
	if err != nil {
		return nil, reply{}, err
	}
	r, err := p.greet(ctx, hello, stderr, stepped)
	if err != nil {
		return nil, reply{}, err
	}
	return p, r, nil
}

// spawn starts argv in a process group of its own.
func spawn(name string, argv []string, patience time.Duration) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = adapterEnv()
	p := &proc{name: name, patience: patience, cmd: cmd, wait: map[int64]chan reply{}, done: make(chan struct{})}
	p.stderr.Store(&tail{})
	cmd.Stderr = stderrOf{p}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: start: %w", name, err)
	}
	go p.read(stdout)
	return p, nil
}

// stderrOf writes a process's stderr to the tail of the sale it serves.
type stderrOf struct{ p *proc }

func (w stderrOf) Write(b []byte) (int, error) { return w.p.stderr.Load().Write(b) }

// greet says hello for a sale, whose stderr tail and step reports the process takes
// from now on; a process that refuses, or cannot be understood, is killed.
func (p *proc) greet(ctx context.Context, hello request, stderr *tail, stepped func(*proc, string, string)) (reply, error) {
	p.stderr.Store(stderr)
	var heard *func(step, order string)
	if stepped != nil {
		f := func(step, order string) { stepped(p, step, order) }
		heard = &f
	}
	p.stepped.Store(heard)
	hctx, cancel := context.WithTimeout(ctx, helloDeadline)
	defer cancel()
	r, err := p.send(hctx, hello, false)
	if err == nil && !r.OK {
		why := r.Error
		if why == "" {
			why = "no reason given"
		}
		err = fmt.Errorf("%s: refused hello: %s%s", p.name, why, stderr.last())
	}
	if err == nil && r.Protocol != 0 && !slices.Contains(versions, r.Protocol) {
		err = fmt.Errorf("%s: answered hello in protocol %d; the harness speaks %v", p.name, r.Protocol, versions)
	}
	if err != nil {
		p.kill()
		return reply{}, err
	}
	r.Protocol = max(r.Protocol, 1)
	p.protocol = r.Protocol
	return r, nil
}

// read dispatches the replies to their callers until the process's stdout ends.
func (p *proc) read(stdout io.Reader) {
	defer close(p.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r reply
		line := sc.Bytes()
		if err := json.Unmarshal(line, &r); err != nil {
			p.fail(fmt.Errorf("wrote %q, which is not a JSON reply", clip(string(line))))
			return
		}
		if r.ID == 0 && r.Step != "" {
			heard := p.stepped.Load()
			if heard == nil {
				p.fail(fmt.Errorf("reported step %q, which hello did not ask for", r.Step))
				return
			}
			(*heard)(r.Step, r.Order)
			continue
		}
		p.mu.Lock()
		ch, ok := p.wait[r.ID]
		delete(p.wait, r.ID)
		p.mu.Unlock()
		if !ok {
			p.fail(fmt.Errorf("answered id %d, which nobody asked: %q", r.ID, clip(string(line))))
			return
		}
		p.answered.Add(1)
		ch <- r
	}
	err := p.cmd.Wait()
	// Known before its callers are woken: they ask exitedByItself.
	p.cleanExit.Store(err == nil || killedItself(err))
	p.gone.Store(true)
	if p.killed.Load() {
		p.fail(errDead)
		return
	}
	p.fail(fmt.Errorf("exited (%v)%s", exitOf(err), p.stderr.Load().last()))
}

// fail marks the process broken with err, once, and wakes every caller. The error
// names the adapter.
func (p *proc) fail(err error) {
	if !errors.Is(err, errDead) {
		err = fmt.Errorf("%s: %w", p.name, err)
	}
	if !p.broken.CompareAndSwap(nil, &err) {
		return
	}
	p.mu.Lock()
	for id, ch := range p.wait {
		close(ch)
		delete(p.wait, id)
	}
	p.mu.Unlock()
	if !errors.Is(err, errDead) {
		p.signal(syscall.SIGKILL) // a process that cannot be trusted is not left to run
	}
}

// err is why the process is broken, or nil.
func (p *proc) err() error {
	if e := p.broken.Load(); e != nil {
		return *e
	}
	return nil
}

// call sends req and waits for its reply, for at most p.patience unless the process
// is paused by a fault.
func (p *proc) call(ctx context.Context, req request) (reply, error) {
	return p.send(ctx, req, true)
}

func (p *proc) send(ctx context.Context, req request, withID bool) (reply, error) {
	ch := make(chan reply, 1)
	p.mu.Lock()
	if err := p.err(); err != nil {
		p.mu.Unlock()
		return reply{}, err
	}
	if withID {
		p.nextID++
		req.ID = p.nextID
	}
	p.wait[req.ID] = ch
	b, _ := json.Marshal(req)
	_, err := p.stdin.Write(append(b, '\n'))
	p.mu.Unlock()
	if err != nil {
		// Its stdin closed: it is exiting, and how it exited says more.
		select {
		case <-p.done:
		case <-time.After(time.Second):
			p.fail(fmt.Errorf("closed its stdin: %w", err))
		}
		return reply{}, p.err()
	}
	// hello has helloDeadline, as PROTOCOL.md promises (an interpreter's start and its
	// imports come first): the call's 5 s cut off Python adapters starting on a loaded
	// machine.
	limit := p.patience
	if req.Op == "hello" {
		limit = helloDeadline
	}
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		select {
		case r, ok := <-ch:
			if !ok {
				return reply{}, p.err()
			}
			return r, nil
		case <-ctx.Done():
			p.forget(req.ID)
			if req.Op == "hello" && errors.Is(ctx.Err(), context.DeadlineExceeded) {
				p.fail(fmt.Errorf("did not answer hello within %s%s", helloDeadline, p.stderr.Load().last()))
				return reply{}, p.err()
			}
			return reply{}, ctx.Err()
		case <-deadline.C:
			if p.paused.Load() {
				deadline.Reset(limit)
				continue
			}
			p.fail(fmt.Errorf("did not answer %s within %s", req.Op, limit))
			return reply{}, p.err()
		}
	}
}

// forget drops a call its caller stopped waiting for; its reply, if one comes, is
// dropped too rather than taken for a stray.
func (p *proc) forget(id int64) {
	p.mu.Lock()
	if _, ok := p.wait[id]; ok {
		p.wait[id] = make(chan reply, 1) // a sink: the late reply lands here
	}
	p.mu.Unlock()
}

// pause stops the process (SIGSTOP) until resume.
func (p *proc) pause() {
	p.paused.Store(true)
	p.signal(syscall.SIGSTOP)
}

func (p *proc) resume() {
	p.signal(syscall.SIGCONT)
	p.paused.Store(false)
}

// starve runs the process run of every period until until, stopping it in between, as
// CFS bandwidth control throttles a group that spent its quota; it ends early once the
// process is gone. Its calls may wait past the deadline meanwhile, as a paused one's.
func (p *proc) starve(until time.Time, run, period time.Duration) {
	p.paused.Store(true)
	defer p.paused.Store(false)
	for {
		select {
		case <-p.done:
			return
		case <-time.After(min(run, time.Until(until))):
		}
		if !time.Now().Before(until) || p.killed.Load() {
			return
		}
		p.signal(syscall.SIGSTOP)
		select {
		case <-p.done:
		case <-time.After(min(period-run, time.Until(until))):
		}
		p.signal(syscall.SIGCONT)
	}
}

// signal sends sig to the process's whole group: whatever it started goes with it.
func (p *proc) signal(sig syscall.Signal) {
	p.signaled.Store(true)
	syscall.Kill(-p.cmd.Process.Pid, sig)
}

// exitedByItself reports whether the process exited of its own accord after it served a
// request, as a library's worker stops (exit 0) or kills itself (SIGKILL), or, with
// crashes, dies of its own error (an exception's exit status: RQ's worker meeting a
// failover's MasterNotFoundError); never one that cannot start, nor the harness's kill
// or a deploy's SIGTERM.
func (p *proc) exitedByItself(crashes bool) bool {
	return p.gone.Load() && (p.cleanExit.Load() || crashes) && p.answered.Load() > 1 && !p.killed.Load() && !p.struck.Load()
}

// killedItself reports whether err is an exit by SIGKILL, which a process the harness
// did not kill sent itself.
func killedItself(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

// kill kills the process's whole group and waits for its output to end.
func (p *proc) kill() {
	p.killed.Store(true)
	p.signal(syscall.SIGKILL)
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second): // the kernel reaps it; do not hang the sale
	}
}

func exitOf(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

// clip keeps a line an adapter wrote short enough for one line of error.
func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// tail keeps the last bytes an adapter's processes wrote to stderr.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailSize = 16 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if len(t.buf) > tailSize {
		t.buf = t.buf[len(t.buf)-tailSize:]
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// last is the last line written, as the end of an error: "; stderr: ...".
func (t *tail) last() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return "; stderr: " + clip(s)
}

// adapterEnv is the environment an adapter process starts with: the command's own, and,
// unless the user set it, GOMAXPROCS=1. A process serves one request at a time, so a
// Go adapter needs one P; with as many as the machine has CPUs, each of a sale's dozens
// of processes kept threads spinning for work between requests (see docs/performance.md).
func adapterEnv() []string {
	env := os.Environ()
	if _, set := os.LookupEnv("GOMAXPROCS"); !set {
		env = append(env, "GOMAXPROCS=1")
	}
	return env
}
