package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/docs"
	"github.com/stockbench/stockbench/results"

	// The command registers asynq; the tests that call the commands in this process do too.
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
)

var binary string

// TestMain builds the command once: these tests run it as a user would, in its own
// process, so that exit codes, signals and what is left behind are the real ones. The
// tests that run a whole command of their own (their own servers, their own --out, what
// they left checked by the pid that started it) run in parallel, after the signal and
// leak checks, which run alone first.
func TestMain(m *testing.M) {
	redis.SetLogger(quietRedis{}) // the tests' own clients, dialling servers still starting
	// The commands' matrices run one sale at a time, as they did when their verdicts were
	// documented: make test runs every package at once, and fault sales side by side on a
	// loaded machine stretch the timing some verdicts depend on. TestMatrixSideBySide
	// runs them side by side.
	os.Setenv("STOCKBENCH_PARALLEL", "1")
	// The suites build the command beside the test binaries, before any test runs
	// (scripts/test-suite.sh), with the flags buildFlags gives.
	if binary = os.Getenv("STOCKBENCH_TEST_BINARY"); binary != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "stockbench-cli-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "stockbench")
	// Built as this test binary was, from the build it came from, so that nothing is
	// compiled twice: plain in make test, raced in make test-race; plain in the long
	// suite, whose commands sell for minutes with verdicts bound to their timing (a raced
	// command took ten times the CPU for the same sale, most of it drawing the report's
	// plots), from the plain build make test left in the cache.
	build := exec.Command("go", append(append([]string{"build"}, buildFlags()...), "-o", binary, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		panic("build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildFlags are the flags of go build this test binary was built with that change
// what is compiled (-race, -trimpath), but -race for the long suite's (tag long).
func buildFlags() []string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	long := slices.ContainsFunc(info.Settings, func(s debug.BuildSetting) bool {
		return s.Key == "-tags" && slices.Contains(strings.Split(s.Value, ","), "long")
	})
	var flags []string
	for _, s := range info.Settings {
		if s.Value == "true" && (s.Key == "-trimpath" || s.Key == "-race" && !long) {
			flags = append(flags, s.Key)
		}
	}
	return flags
}

// stockbench runs the command and returns its exit code, stdout and stderr.
func stockbench(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return runCmd(t, exec.Command(binary, args...))
}

// stockbenchWithin runs the command as stockbench does, but sends it SIGQUIT after
// limit: a command that hangs then ends with where it hung (the Go runtime's dump of its
// goroutines, on stderr), which the test prints, rather than at the test binary's timeout
// with nothing said of the command.
func stockbenchWithin(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 30 * time.Second
	code, stdout, stderr := runCmd(t, cmd)
	if ctx.Err() != nil {
		t.Fatalf("stockbench %s did not end within %s:\n%s\n%s", strings.Join(args, " "), limit, stdout, stderr)
	}
	return code, stdout, stderr
}

// runCmd runs cmd and returns its exit code, stdout and stderr.
func runCmd(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func TestBadInput(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"unknown lock", []string{"run", "--lock", "redlock-ish"}, `unknown lock "redlock-ish"`},
		{"negative stock", []string{"run", "--lock", "lua", "--stock", "-5"}, "stock must not be negative"},
		{"no buyers", []string{"run", "--lock", "lua", "--buyers", "0"}, `invalid value "0" for flag -buyers: must be positive`},
		{"no lock", []string{"run"}, "--lock or --queue is required"},
		{"unknown flag", []string{"run", "--lock", "lua", "--stonks", "3"}, "flag provided but not defined: -stonks"},
		{"bad number", []string{"run", "--lock", "lua", "--buyers", "many"}, `invalid value "many"`},
		{"bad think", []string{"run", "--lock", "lua", "--think", "gaussian:1ms"}, `unknown distribution "gaussian"`},
		{"unknown scenario", []string{"matrix", "--scenarios", "black-friday"}, `unknown scenario "black-friday"`},
		{"--lock-go of a module no adapter imports", []string{"run", "--lock-go", "example.com/nolock@v1.0.0"}, "no adapter in adapters/go imports example.com/nolock (adapters: asynq-queue, redislock-lock, redsync-lock, rueidislock-lock)"},
		{"--queue-go of a lock library", []string{"run", "--queue-go", "github.com/bsm/redislock@v0.9.4"}, "github.com/bsm/redislock's adapter redislock-lock runs a lock: name it with --lock-go"},
		{"--lock-go without a version", []string{"run", "--lock-go", "github.com/bsm/redislock --refresh"}, "want MODULE@VERSION"},
		{"--lock-go of a directory that is no module", []string{"run", "--lock-go", "github.com/bsm/redislock=../../docs"}, "../../docs is not a Go module: no go.mod there"},
		{"--lock-go of another module's tree", []string{"run", "--lock-go", "github.com/bsm/redislock=../../adapters/go"}, "../../adapters/go is module github.com/stockbench/stockbench/adapters/go, not github.com/bsm/redislock"},

		{"unknown command", []string{"bench"}, `unknown command "bench"`},
		{"negative procs", []string{"run", "--lock", "lua", "--procs", "-1"}, "--procs must not be negative"},
		{"unknown redis mode", []string{"run", "--lock", "lua", "--redis", "cloud"}, `unknown redis mode "cloud"`},
		{"unreachable redis", []string{"run", "--lock", "lua", "--redis-url", "redis://127.0.0.1:1"}, "127.0.0.1:1 does not answer"},
		{"unknown fault", []string{"run", "--lock", "lua", "--fault", "meteor"}, `unknown fault "meteor"`},
		{"bad fault setting", []string{"run", "--lock", "token", "--fault", "redis-pause:for=-1s"}, "must be positive"},
		{"server fault on own redis", []string{"run", "--lock", "token", "--fault", "redis-restart", "--redis-url", "redis://127.0.0.1:1"}, "cannot run with --redis-url"},
		{"queue fault on a lock", []string{"run", "--lock", "token", "--fault", "worker-crash"}, "fault worker-crash does not apply to locks"},
		{"queue fault in a matrix's lock faults", []string{"matrix", "--locks", "", "--faults", "worker-term", "--queues", "list"}, "fault worker-term does not apply to locks"},
		{"lock fault on a queue", []string{"run", "--queue", "stream", "--fault", "client-pause"}, "fault client-pause does not apply to queues (faults for queues: worker-crash, worker-crash-late, worker-pause, reclaimers, evict-lease, evict-job, consumer-churn, worker-term, step-term, redis-restart)"},
		{"unknown queue", []string{"run", "--queue", "kafka"}, `unknown queue "kafka"`},
		{"guarantees of nothing", []string{"guarantees"}, "guarantees: name one run directory"},
		{"guarantees of no run", []string{"guarantees", "results/runs/none-such"}, "no such run directory or results file"},
		{"guarantees of a file that is no run", []string{"guarantees", "../../baseline/gate.json"}, "gate.json"},
		{"bad fulfil", []string{"run", "--queue", "stream", "--fulfil", "twice"}, `unknown fulfil "twice"`},
		{"lock and queue", []string{"run", "--queue", "stream", "--lock", "token"}, "exclude each other"},
		{"redlock on own redis", []string{"matrix", "--locks", "redlock", "--faults", "none", "--redis-url", "redis://127.0.0.1:1"}, "needs 5 independent Redis servers"},
		// Sizes the machine cannot hold are refused before a server starts, naming the flag.
		{"too many waiting buyers", []string{"run", "--lock", "token", "--buyers", "100000000"}, "lower --buyers"},
		{"too many workers", []string{"run", "--queue", "list", "--workers", "100000000"}, "lower --workers"},
		{"too many connections", []string{"run", "--lock", "lua", "--conns", "10000000"}, "lower --conns"},
		{"rate not a number", []string{"run", "--lock", "lua", "--rate", "NaN"}, "rate must be a finite number"},
		{"share not a number", []string{"run", "--lock", "token", "--think", "longtail:1ms,2ms,NaN"}, "share must be between 0 and 1"},
		{"no apps", []string{"run", "--lock", "token", "--apps", "0"}, `invalid value "0" for flag -apps: must be positive`},
		{"one app to cut off", []string{"run", "--lock", "token", "--fault", "app-blackhole", "--apps", "1"}, "app-blackhole strikes one application instance while the others go on: it needs --apps 2 or more, got 1"},
		{"negative serve", []string{"run", "--lock", "token", "--serve", "-1"}, "must not be negative"},
		{"rate on a server fault", []string{"run", "--lock", "token", "--fault", "redis-pause:p=0.1"}, "strikes one victim or a server, not at a rate"},
		{"no parallel", []string{"matrix", "--parallel", "0"}, "--parallel must be at least 1"},
		{"sweep without vary", []string{"sweep", "--lock", "token"}, "--lock and --vary are required"},
		{"sweep unknown setting", []string{"sweep", "--lock", "token", "--vary", "colour=1..2:3"}, `unknown setting "colour"`},
		{"sweep backwards", []string{"sweep", "--lock", "token", "--vary", "ttl=4s..250ms:8"}, "want FROM below TO"},
		{"sweep too many points", []string{"sweep", "--lock", "token", "--vary", "buyers=1..1000:500"}, "2 to 50 points"},
		{"sweep bad value", []string{"sweep", "--lock", "token", "--vary", "pause-rate=0,0.1"}, "not a share above 0"},
		{"sweep twice", []string{"sweep", "--lock", "token", "--vary", "ttl=1s,2s", "--ttl", "3s"}, "--ttl is what --vary varies"},
		{"sweep unknown lock", []string{"sweep", "--lock", "nope", "--vary", "ttl=1s,2s"}, `unknown lock "nope"`},
		{"perf bad counts", []string{"perf", "--rss-buyers", "lots"}, `"lots" is not a number of buyers`},
		{"perf unknown purchase", []string{"perf", "--purchase", "lua,nope"}, `--purchase: unknown lock "nope"`},
		{"perf purchase rate 0", []string{"perf", "--purchase-rate", "0"}, "--purchase-buyers and --purchase-rate must be positive"},
		{"shard on its own redis", []string{"run", "--lock", "lua", "--shard", "0/2"}, "--shard needs --redis-url"},
		{"shard of a queue under a one-victim fault", []string{"run", "--queue", "list", "--fault", "worker-crash", "--shard", "0/2", "--redis-url", "redis://127.0.0.1:1"}, "a sharded sale takes only faults at a rate"},
		{"shard out of range", []string{"run", "--lock", "lua", "--shard", "2/2", "--redis-url", "redis://127.0.0.1:1"}, "shard index must be from 0 to 1"},
		{"shard not i/n", []string{"run", "--lock", "lua", "--shard", "half"}, "shard must be i/n"},
		{"more shards than buyers", []string{"run", "--lock", "lua", "--shard", "0/4", "--buyers", "3", "--redis-url", "redis://127.0.0.1:1"}, "4 shards need at least 4 buyers"},
		{"shard under a fault", []string{"run", "--lock", "token", "--shard", "0/2", "--fault", "client-pause", "--redis-url", "redis://127.0.0.1:1"}, "a sharded sale takes only faults at a rate"},
		{"no shard wait", []string{"run", "--lock", "lua", "--shard", "0/2", "--shard-wait", "0s", "--redis-url", "redis://127.0.0.1:1"}, "--shard-wait must be more than 0 and at most 1h"},
		{"bad run id", []string{"run", "--lock", "lua", "--shard", "0/2", "--run-id", "../x", "--redis-url", "redis://127.0.0.1:1"}, "--run-id must be"},
		{"drop through a lock-free design", []string{"run", "--scenario", "drop-sale", "--lock", "lua"}, "lua left out of drop-sale: it is lock-free"},
		{"negative waves", []string{"run", "--lock", "token", "--waves", "-1"}, `invalid value "-1" for flag -waves: must not be negative`},
		{"too many waves", []string{"run", "--scenario", "drop-sale", "--lock", "token", "--waves", "20000"}, "waves must be at most 10000"},
		{"too many schedulers", []string{"run", "--scenario", "drop-sale", "--lock", "token", "--buyers", "5000"}, "a drop's buyers are its scheduler instances: at most 1000"},
		{"drop at a rate", []string{"run", "--scenario", "drop-sale", "--lock", "token", "--rate", "10"}, "takes no arrival rate"},
		{"no time between waves", []string{"run", "--scenario", "drop-sale", "--lock", "token", "--wave-every", "0s"}, `invalid value "0s" for flag -wave-every`},
		{"dashboard not an address", []string{"run", "--lock", "lua", "--dashboard", "8080"}, `--dashboard "8080": want host:port or :port`},
		{"dashboard on no address of this machine", []string{"matrix", "--dashboard", "192.0.2.1:0"}, "--dashboard 192.0.2.1:0: listen tcp 192.0.2.1:0"},
		{"dashboard of a shard", []string{"run", "--lock", "lua", "--shard", "0/2", "--redis-url", "redis://127.0.0.1:1", "--dashboard", ":0"}, "--dashboard watches a whole run, not one shard of it"},
		{"dashboard of a shrink", []string{"shrink", "results/runs/none", "--dashboard", ":0"}, "shrink: --dashboard watches a run"},
		{"repeat zero times", []string{"matrix", "--repeat", "0"}, `invalid value "0" for flag -repeat: must be from 1 to 20`},
		{"repeat too often", []string{"run", "--lock", "lua", "--repeat", "50"}, `invalid value "50" for flag -repeat: must be from 1 to 20`},
		{"plan without a rate", []string{"plan", "--buyers", "1000"}, "--rate must be a positive number"},
		{"plan without buyers", []string{"plan", "--rate", "100"}, "--buyers must be positive"},
		{"plan of an unknown lock", []string{"plan", "--buyers", "1000", "--rate", "100", "--lock", "mutex"}, `unknown lock "mutex"`},
		{"plan of a bad size", []string{"plan", "--buyers", "1000", "--rate", "100", "--shard-memory", "2XB"}, "a size as 2GiB"},
		{"plan of a buyer too big", []string{"plan", "--buyers", "1000", "--rate", "100", "--shard-memory", "1Ki"}, "does not fit in 1024 bytes"},
		{"merge nothing", []string{"merge"}, "name the shards' directories"},
		{"merge no shard", []string{"merge", "/nonexistent/run"}, "/nonexistent/run holds no shard's record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "runs")
			code, _, stderr := stockbench(t, append(tt.args, "--out", out)...)
			if code != bench.ExitUsage {
				t.Errorf("exit code: want %d, got %d", bench.ExitUsage, code)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "stockbench: ") || !strings.Contains(lines[0], tt.want) {
				t.Errorf("want one line with %q, got:\n%s", tt.want, stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("bad input must not create %s", out)
			}
		})
	}
}

// TestOutChecked: an --out that cannot hold a run directory is refused before Redis
// starts, and nothing is made.
func TestOutChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tt := range []struct{ name, out, want string }{
		{"a file", file, "is a file, not a directory"},
		{"under a file", filepath.Join(file, "runs"), "not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := stockbench(t, "run", "--lock", "lua", "--out", tt.out)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != bench.ExitUsage || len(lines) != 1 || !strings.Contains(lines[0], tt.want) {
				t.Errorf("want exit 2 and one line with %q, got %d:\n%s", tt.want, code, stderr)
			}
		})
	}
	if b, _ := os.ReadFile(file); string(b) != "x" {
		t.Error("the file given as --out was changed")
	}
}

func TestList(t *testing.T) {
	code, stdout, _ := stockbench(t, "list")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	lines := strings.Split(stdout, "\n")
	for _, name := range []string{"seed-setnx", "setnx-expire", "set-nx-ex", "lua", "flash-sale", "slow-holder", "rush",
		"stream", "reliable-list", "worker-crash", "queue-sale"} {
		// The name on a line of its own, its description wrapped under it.
		i := slices.Index(lines, name)
		if i < 0 || i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    ") {
			t.Errorf("list does not name %s on a line of its own, its description under it", name)
		}
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > docs.ListWidth {
			t.Errorf("a line of %d columns, more than %d: %q", n, docs.ListWidth, l)
		}
	}
}

// TestRun is the happy path: one sale, a results directory with everything in it.
func TestRun(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "run", "--lock", "lua", "--buyers", "300", "--stock", "50", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readOnlyRun(t, out)
	if !f.Complete || len(f.Runs) != 1 || f.Runs[0].Verdict.String() != "SAFE" || f.Runs[0].Oracle.Bought != 50 {
		t.Errorf("want one complete SAFE run selling 50, got %+v", f)
	}
	if !strings.Contains(stdout, "flash-sale  lua") || !strings.Contains(stderr, "redis: ") {
		t.Errorf("want the table on stdout and the target on stderr; stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	leftBehind(t, f)
}

// TestInterrupt: Ctrl-C, or Redis dying, in the middle of a sale still writes what was
// measured, marked incomplete, and leaves no Redis behind, for each embedded target.
func TestInterrupt(t *testing.T) {
	tests := []struct {
		mode, cause string
		exit        int
		reason      string // in incomplete_reason
	}{
		{"process", "ctrl-c", bench.ExitInterrupted, "interrupted"},
		{"container", "ctrl-c", bench.ExitInterrupted, "interrupted"},
		{"process", "redis crash", bench.ExitUnfinished, "failed"},
		{"container", "redis crash", bench.ExitUnfinished, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.mode+" "+tt.cause, func(t *testing.T) {
			t.Parallel() // each on servers of its own; they wait out a second and the end
			if tt.mode == "container" {
				needDocker(t)
			}
			out := t.TempDir()
			cmd := exec.Command(binary, "run", "--lock", "set-nx-ex", "--buyers", "50", "--stock", "100",
				"--think", "200ms", "--redis", tt.mode, "--out", out)
			var stdout strings.Builder
			cmd.Stdout = &stdout
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var redisLine string
			lines := bufio.NewScanner(stderr)
			for lines.Scan() && !strings.Contains(lines.Text(), "[1/1]") {
				if strings.Contains(lines.Text(), "redis: ") {
					redisLine = lines.Text()
				}
			}
			soldOne(t, redisLine, 100) // not a set time: raced, a busy machine may sell none in a second
			if tt.cause == "ctrl-c" {
				cmd.Process.Signal(syscall.SIGINT)
			} else {
				crash(t, redisLine)
			}
			for lines.Scan() {
			}
			cmd.Wait()
			if exp, got := tt.exit, cmd.ProcessState.ExitCode(); exp != got {
				t.Errorf("exit code: want %d, got %d", exp, got)
			}
			// The last line says the code the run exits with, and why.
			if last := lastLine([]byte(stdout.String())); !strings.HasPrefix(last, fmt.Sprintf("exit %d: ", tt.exit)) {
				t.Errorf("last line %q, want exit %d's", last, tt.exit)
			}
			f := readOnlyRun(t, out)
			if f.Complete || len(f.Runs) != 1 || f.Runs[0].Complete || !strings.Contains(f.Incomplete, tt.reason) {
				t.Errorf("want one incomplete run, %s, got complete=%v reason=%q", tt.reason, f.Complete, f.Incomplete)
			}
			if len(f.Runs) == 1 && f.Runs[0].Oracle.Bought == 0 {
				t.Error("want the sales made before the end recorded")
			}
			leftBehind(t, f)
		})
	}
}

// soldOne waits, up to 30 s, until the sale on the Redis that the harness's "redis:" line
// names has sold a unit of its stock.
func soldOne(t *testing.T, redisLine string, stock int) {
	t.Helper()
	m := regexp.MustCompile(` at (\S+:\d+)`).FindStringSubmatch(redisLine)
	if m == nil {
		t.Fatalf("no address in %q", redisLine)
	}
	c := redis.NewClient(&redis.Options{Addr: m[1], MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		keys, _ := c.Keys(ctx, "*:stock").Result()
		for _, k := range keys {
			if n, err := c.Get(ctx, k).Int(); err == nil && n < stock {
				return
			}
		}
	}
	t.Fatalf("no unit sold in 30 s on %s", m[1])
}

// crash kills the Redis that the harness's "redis:" line names, as a crash would.
func crash(t *testing.T, redisLine string) {
	t.Helper()
	if m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(redisLine); m != nil {
		pid, _ := strconv.Atoi(m[1])
		syscall.Kill(pid, syscall.SIGKILL)
		return
	}
	m := regexp.MustCompile(`\(container ([0-9a-f]+)`).FindStringSubmatch(redisLine)
	if m == nil {
		t.Fatalf("no pid or container in %q", redisLine)
	}
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if _, err := cli.ContainerKill(context.Background(), m[1], client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
}

// readOnlyRun reads the single run directory under out.
func readOnlyRun(t *testing.T, out string) *results.File {
	t.Helper()
	return readRun(t, out, "latency-flash-sale.png")
}

// readRun reads the single run directory under out and checks it holds summary.md and
// the named plot.
func readRun(t *testing.T, out, plot string) *results.File {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "results.json"))
	if len(dirs) != 1 {
		t.Fatalf("want one run directory under %s, got %v", out, dirs)
	}
	f, err := results.Read(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if ext := filepath.Ext(plot); ext == ".png" || ext == ".svg" {
		plot = filepath.Join("plots", plot) // the plots stand apart from the three files a reader opens
	}
	for _, name := range []string{"summary.md", plot} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(dirs[0]), name)); err != nil {
			t.Errorf("run directory lacks %s", name)
		}
	}
	return f
}

// leftBehind fails if the Redis the run started still exists.
func leftBehind(t *testing.T, f *results.File) {
	t.Helper()
	if pid := f.Target.PID; pid != 0 {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("redis-server pid %d still runs", pid)
		}
	}
	if id := f.Target.ContainerID; id != "" {
		cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer cli.Close()
		if _, err := cli.ContainerInspect(context.Background(), id, client.ContainerInspectOptions{}); err == nil {
			t.Errorf("container %s still exists", id[:12])
		}
	}
}

func needDocker(t *testing.T) {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err == nil {
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err = cli.Ping(ctx, client.PingOptions{})
	}
	if err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
}

// nothingLeft fails if the stockbench process pid left anything it started: the Redis f
// names (when f is not nil), containers, networks, or a redis-server's directory.
func nothingLeft(t *testing.T, pid int, f *results.File) {
	t.Helper()
	if f != nil {
		leftBehind(t, f)
	}
	if exec.Command("docker", "version").Run() == nil {
		if n := ownContainers(t, pid); n != 0 {
			t.Errorf("%d containers left behind", n)
		}
		if n := ownNetworks(t, pid); n != 0 {
			t.Errorf("%d networks left behind", n)
		}
	}
	owners, _ := filepath.Glob(filepath.Join(os.TempDir(), "stockbench-redis-*", "owner"))
	for _, owner := range owners {
		b, _ := os.ReadFile(owner)
		if p, _, _ := strings.Cut(string(b), " "); p == strconv.Itoa(pid) {
			t.Errorf("%s left behind", filepath.Dir(owner))
		}
	}
}

// ownContainers counts the containers a stockbench process with pid started that still exist.
func ownContainers(t *testing.T, pid int) int {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.ContainerList(context.Background(), client.ContainerListOptions{
		All: true, Filters: make(client.Filters).Add("label", "org.stockbench.pid="+strconv.Itoa(pid)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// ownNetworks counts the networks a stockbench process with pid created that still exist.
func ownNetworks(t *testing.T, pid int) int {
	t.Helper()
	cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	list, err := cli.NetworkList(context.Background(), client.NetworkListOptions{
		Filters: make(client.Filters).Add("label", "org.stockbench.pid="+strconv.Itoa(pid)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(list.Items)
}

// TestQueueRun: a queue sale through the command, with its backlog plot.
func TestQueueRun(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "run", "--queue", "list", "--fault", "worker-crash", "--workers", "3", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readRun(t, out, "backlog-queue-sale-naive-worker-crash.png")
	if r := f.Runs[0]; r.Kind != "queue" || r.Verdict.Cell() != "LOST 3" || r.Queue == nil || r.Queue.Lost != 3 || len(r.Backlog) == 0 {
		t.Errorf("want list to lose the 3 crashed workers' tasks, with a backlog; got %s, %+v", r.Verdict.Cell(), r.Queue)
	}
	if !strings.Contains(stdout, "queue-sale (naive fulfil)") {
		t.Errorf("want the queue row in the table:\n%s", stdout)
	}
}
