package servers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Process starts redis-server as a child process on a free loopback port, with its files
// in a temporary directory and persistence off.
type Process struct {
	// Binary is the redis-server to run. Default: redis-server from PATH.
	Binary string
	// Args are extra server arguments, such as "--maxmemory", "10mb".
	Args []string
	// Clock starts the server with a wall clock Target.JumpClock can move. Default: the
	// host's clock.
	Clock bool
}

var _ Provider = Process{}

// Start implements [Provider]. A port another program takes between our probe and the
// server's bind is retried on a fresh port.
func (p Process) Start(ctx context.Context) (*Target, error) {
	bin := p.Binary
	if bin == "" {
		bin = "redis-server"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("process: %s not found (install Redis, or name its binary): %w", bin, err)
	}
	reapDirs()
	for attempt := 1; ; attempt++ {
		t, err := p.startOnce(ctx, path)
		if err == nil || attempt == 3 || !errors.Is(err, errPortTaken) {
			return t, err
		}
	}
}

var errPortTaken = errors.New("port taken")

func (p Process) startOnce(ctx context.Context, path string) (*Target, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("process: free port: %w", err)
	}
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, fmt.Errorf("process: temp dir: %w", err)
	}
	if err := writeOwner(dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("process: temp dir: %w", err)
	}
	s := &server{path: path, dir: dir, port: port, extra: p.Args}
	if p.Clock {
		if s.shim, err = clockShim(); err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("process: %w", err)
		}
	}
	if err := s.launch(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("process: %w", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	t := newTarget(Info{Kind: KindProcess, Addr: addr, Detail: fmt.Sprintf("%s (pid %d)", path, s.pid()),
		Owned: true, PID: s.pid()}, redis.UniversalOptions{Addrs: []string{addr}}, s.shutdown, s)
	t.clock = p.Clock
	if err := s.waitReady(ctx, t); err != nil {
		t.Close(context.Background())
		return nil, err
	}
	return t, nil
}

// server is one redis-server process, which a fault may kill and start again on the same
// port and directory.
type server struct {
	path, dir string
	port      int
	extra     []string
	shim      string // the clock shim to preload, for a movable clock

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
}

var _ control = (*server)(nil)

func (s *server) launch() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no",
		"--dir", s.dir, "--logfile", s.logPath(),
	}, s.extra...)
	cmd := exec.Command(s.path, args...)
	cmd.SysProcAttr = childAttrs()
	if s.shim != "" {
		cmd.Env = append(os.Environ(), clockEnv(s.shim, s.clockFile())...)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", s.path, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	return nil
}

func (s *server) logPath() string { return filepath.Join(s.dir, "redis.log") }

// clockFile is where the clock shim reads the server's clock offset.
func (s *server) clockFile() string { return filepath.Join(s.dir, "clock") }

func (s *server) setClock(_ context.Context, offset time.Duration) error {
	return writeOffset(s.clockFile(), offset)
}

func (s *server) current() (*exec.Cmd, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd, s.exited
}

func (s *server) pid() int {
	cmd, _ := s.current()
	return cmd.Process.Pid
}

// waitReady waits until t answers, giving up early if the process exits.
func (s *server) waitReady(ctx context.Context, t *Target) error {
	_, exited := s.current()
	readyCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-exited:
			cancel()
		case <-readyCtx.Done():
		}
	}()
	if err := t.ready(readyCtx, 10*time.Second); err != nil {
		log, _ := os.ReadFile(s.logPath())
		if bytes.Contains(log, []byte("Address already in use")) {
			return fmt.Errorf("process: %w", errPortTaken)
		}
		return fmt.Errorf("process: %s did not come up: %w%s", s.path, err, lastLine(log))
	}
	return nil
}

func (s *server) signal(sig syscall.Signal) error {
	cmd, _ := s.current()
	return cmd.Process.Signal(sig)
}

func (s *server) pause(context.Context) error  { return s.signal(syscall.SIGSTOP) }
func (s *server) resume(context.Context) error { return s.signal(syscall.SIGCONT) }

func (s *server) kill(context.Context) error {
	cmd, exited := s.current()
	cmd.Process.Kill()
	<-exited
	return nil
}

func (s *server) start(ctx context.Context) (string, error) {
	if err := s.launch(); err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)), nil
}

// shutdown asks the server to exit, kills it if it does not within ctx or 5s, and
// removes its directory.
func (s *server) shutdown(ctx context.Context) error {
	defer os.RemoveAll(s.dir)
	cmd, exited := s.current()
	select {
	case <-exited:
		return nil
	default:
	}
	cmd.Process.Signal(syscall.SIGCONT) // a paused server cannot hear SIGTERM
	cmd.Process.Signal(syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		cmd.Process.Kill()
		<-exited
		return fmt.Errorf("process: redis-server pid %d ignored SIGTERM and was killed", cmd.Process.Pid)
	}
}

// A process target's files live in a directory named dirPrefix*, with an owner file
// naming the harness process (pid and start time), so that a later run can remove the
// directories of a harness that was killed before it could. The kernel kills the
// server itself with its harness (see childAttrs).
const (
	dirPrefix = "stockbench-redis-"
	ownerFile = "owner"
)

func writeOwner(dir string) error {
	pid := os.Getpid()
	return os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)+" "+processStart(pid)+"\n"), 0o644)
}

// reapDirs removes the directories of process targets whose harness is gone. A
// directory without an owner file (an older harness's) goes once it is an hour old.
// Best effort: a failure here must not stop a run.
func reapDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		if dirOwnerGone(d) {
			os.RemoveAll(d)
		}
	}
}

func dirOwnerGone(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		st, err := os.Stat(dir)
		return err == nil && time.Since(st.ModTime()) > time.Hour
	}
	pid, start, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	return ownerGone(map[string]string{labelPID: pid, labelStart: start})
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLine(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) == 0 || lines[0] == "" {
		return ""
	}
	return ": " + lines[len(lines)-1]
}
