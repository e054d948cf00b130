package adapter

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// need skips the test, saying why, when a runtime is missing; CI sets
// STOCKBENCH_REQUIRE_ADAPTERS and fails instead.
func need(t *testing.T, what string, check ...string) {
	t.Helper()
	if err := exec.Command(check[0], check[1:]...).Run(); err != nil {
		if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
			t.Fatalf("%s is missing (%v); scripts/ensure-adapters.sh installs it", what, err)
		}
		t.Skipf("%s is missing (%v); scripts/ensure-adapters.sh installs it", what, err)
	}
}

// testProcs is the adapters' pool size in these tests: eight processes contend for the lock
// or the queue as 32 do, and a sale starting 32 interpreters spent more of the CPU on
// starting them (two seconds of it, a redis-py sale) than on the design under test.
const testProcs = 8

var (
	php    = []string{"php", "-r", "exit(class_exists('Redis') ? 0 : 1);"}
	python = []string{"/usr/bin/python3", "-c", "import redis"}
)

// earns runs impl under every lock fault the design named documented documents (or
// under only those given), the network faults, failover and restart included: each
// reaches the adapter's connections through its front. An adapter of protocol 2 says
// what it documents in its hello, and earns it; the shipped adapters document at least
// what their Go counterparts do.
func earns(t *testing.T, impl lockimpl.Impl, documented string, only ...faults.Kind) {
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	want := lockDocumented(t, documented)
	kinds := only
	if len(kinds) == 0 {
		kinds = append([]faults.Kind{""}, faults.Kinds(faults.Locks)...)
	}
	for _, k := range kinds {
		var plan faults.Plan
		if k != "" {
			plan = faults.Plan{{Kind: k}}
		}
		s := sale
		s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:%s:%s}", impl.Name, plan)
		classes, ok := want.For(plan)
		if k == faults.TermHolder {
			// The Go counterpart's holders are goroutines, which no SIGTERM reaches; the
			// shipped adapters stop at once on it, as a crashed holder.
			classes, ok = want.For(faults.Plan{{Kind: faults.CrashHolder}})
		}
		if !ok {
			continue
		}
		// One sale at a time: a pool of interpreters starting at once is a load of its
		// own, and the other packages' timing-bound verdicts run beside these.
		t.Run(plan.String(), func(t *testing.T) {
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			// The adapter is judged by what its hello documents, which holds at least
			// what its Go counterpart documents: it may admit more where a process's hop
			// changes how two holders' writes interleave, and says so.
			if run.AsExpected == nil || !*run.AsExpected {
				t.Errorf("the adapter documents %v, it earned %s (%s)", run.Expected, run.Verdict.Cell(), run.Verdict)
			}
			for _, c := range classes {
				if !slices.Contains(run.Expected, c) {
					t.Errorf("%s documents %v; the adapter's hello, %v, leaves out %s", documented, classes, run.Expected, c)
				}
			}
		})
	}
}

// judged checks that run's record was judged by exactly classes, as the adapter said in
// its hello; an adapter of protocol 1 (want nil) documents nothing.
func judged(t *testing.T, run results.Run, classes []oracle.Class) {
	t.Helper()
	got, want := slices.Clone(run.Expected), slices.Clone(classes)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || (want != nil) != (run.AsExpected != nil) {
		t.Errorf("the record was judged by %v; the adapter's hello documents %v", run.Expected, classes)
	}
}

// The seed article's lock, in PHP with phpredis, earns what its Go port documents: an
// oversell with no fault at all, from the steal race between SETNX and EXPIRE.
func TestSeedLockInPHP(t *testing.T) {
	need(t, "PHP with phpredis (php-cli, php-redis)", php...)
	earns(t, Lock(Config{Name: "php-seed", Command: "php ../../../adapters/php/seed-lock.php", Procs: testProcs}, false), "seed-setnx")
}

// redis-py's own Lock, a real library's, earns what the token lock documents: safe
// while holders live and stay inside the TTL, an oversell when a holder's process is
// stopped past it.
func TestRedisPyLock(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	earns(t, Lock(Config{Name: "redis-py", Command: "/usr/bin/python3 ../../../adapters/python/redis_py_lock.py", Procs: testProcs}, false), "token")
}

// The SET NX PX lock most Node services hand-roll, on Debian's node-redis, earns what
// the token lock documents, its algorithm in Go; the package states the node-redis it
// was measured with, which is this machine's.
func TestNodeLock(t *testing.T) {
	need(t, "Node.js with Debian's node-redis (nodejs, node-redis)", nodeRedis...)
	pkg, err := os.ReadFile("../../../adapters/node/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var said struct {
		Stockbench struct {
			TestedWith map[string]string `json:"tested-with"`
		} `json:"stockbench"`
	}
	if err := json.Unmarshal(pkg, &said); err != nil {
		t.Fatal(err)
	}
	have, err := exec.Command(nodeRedis[0], "-e", nodeRedisVersion).Output()
	if err != nil || majorMinor(string(have)) != majorMinor(said.Stockbench.TestedWith["redis"]) {
		t.Errorf("package.json says it was tested with node-redis %s, this machine has %q (%v): measure again and say so",
			said.Stockbench.TestedWith["redis"], have, err)
	}
	earns(t, Lock(Config{Name: "node-lock", Command: "node ../../../adapters/node/set-nx-px-lock.js", Procs: testProcs}, false), "token")
}

// A Go lock library at a version other than stockbench's own: adapters/go is a module of
// its own, whose go.mod names go-redsync/redsync v4.8.1 while stockbench's names a later
// one (its built-in redsync design). Built here as make go-adapters builds it, it earns
// what the built-in design documents.
func TestGoAdapterAtItsOwnVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "redsync-lock")
	build := exec.Command("go", "build", "-o", bin, "./redsync-lock")
	build.Dir, build.Env = "../../../adapters/go", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in adapters/go: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	const theirs = "github.com/go-redsync/redsync/v4\tv4.8.1"
	mod, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	ours := "" // stockbench's own redsync
	for _, line := range strings.Split(string(mod), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "github.com/go-redsync/redsync/v4" {
			ours = f[1]
		}
	}
	if !strings.Contains(string(out), theirs) || ours == "" || ours == "v4.8.1" {
		t.Fatalf("want the adapter on redsync v4.8.1 beside stockbench's own (%s); the adapter has:\n%s", ours, out)
	}
	earns(t, Lock(Config{Name: "redsync-4.8.1", Command: bin, Procs: testProcs}, false), "redsync")
}

// The same adapter as Redlock over five servers (it supports nodes; hello names each
// server's front), renewing its leases with Extend: slow work no longer outlives the
// lease, where without renewals it does, as the built-in redlock documents.
func TestGoAdapterOnFiveServers(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "redsync-lock")
	build := exec.Command("go", "build", "-o", bin, "./redsync-lock")
	build.Dir, build.Env = "../../../adapters/go", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in adapters/go: %v\n%s", err, out)
	}
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flags string
		fault faults.Kind
		want  []oracle.Class
	}{
		{"--extend", "", []oracle.Class{oracle.ClassSafe, oracle.ClassStuck}},
		{"--extend", faults.SlowWork, []oracle.Class{oracle.ClassSafe, oracle.ClassStuck}},
		{"", faults.SlowWork, []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassOverlap}},
	} {
		var plan faults.Plan
		if tc.fault != "" {
			plan = faults.Plan{{Kind: tc.fault}}
		}
		impl := Lock(Config{Name: "redlock-4.8.1", Command: strings.TrimSpace(bin + " " + tc.flags), Procs: testProcs, Nodes: 5}, false)
		t.Run(tc.flags+"/"+plan.String(), func(t *testing.T) {
			s := sale
			s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:redlock:%s:%s}", tc.flags, plan)
			run := rigtest.On(t, h, rig.ForLock(impl, plan, s.WithDefaults().Conns), func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			if !slices.Contains(tc.want, run.Verdict.Class) || run.AsExpected == nil || !*run.AsExpected {
				t.Errorf("want %v, as the adapter documents, got %s (%s), documented %v", tc.want, run.Verdict.Cell(), run.Verdict, run.Expected)
			}
		})
	}
}

// nodeRedis checks for Node.js with Debian's node-redis, where the adapter finds it.
var (
	nodeRedisVersion = "module.paths.push('/usr/share/nodejs'); console.log(require('redis/package.json').version)"
	nodeRedis        = []string{"node", "-e", nodeRedisVersion}
)

// running lists the processes whose command line holds marker.
func running(marker string) []string {
	out, _ := exec.Command("pgrep", "-af", marker).Output()
	var procs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.Contains(l, "pgrep") {
			procs = append(procs, l)
		}
	}
	return procs
}

// Misbehaving adapters: each stops the sale with one line naming the adapter and what
// it did, the sale is marked incomplete, the adapter's stderr is kept, and no process of
// it (nor anything it started) is left.
func TestMisbehavingAdapters(t *testing.T) {
	for _, tc := range []struct {
		script, want, log string
	}{
		{"exits.sh", `adapter exits: exited (exit status 3); stderr: PHP Fatal error: Class "Redis" not found`, ""},
		{"garbage.sh", `adapter garbage: wrote "Warning: Undefined array key \"ttl\"", which is not a JSON reply`, ""},
		{"strayid.sh", `adapter strayid: answered id 999999, which nobody asked`, ""},
		{"hangs.sh", `adapter hangs: did not answer try within 15s`, ""},
		{"badversion.sh", `adapter badversion: answered hello in protocol 3; the harness speaks [1 2]`, ""},
		{"crashes.sh", `adapter crashes: exited (exit status 139); stderr: Segmentation fault (core dumped)`, "Segmentation fault"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Parallel()
			script, _ := filepath.Abs(filepath.Join("testdata", tc.script))
			name := strings.TrimSuffix(tc.script, ".sh")
			impl := Lock(Config{Name: name, Command: "/bin/sh " + script, Procs: 2}, false)
			sale := scenarios.FlashSale{Sale: scenarios.Sale{Name: "misbehaving", Buyers: 20, Stock: 5, Conns: 2,
				Prefix: "{adapter:misbehaving:" + name + "}"}, TTL: time.Second}
			c := redistest.Shared(t).Client(2)
			defer c.Close()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run, err := sale.Run(ctx, scenarios.Single(c), impl)
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n\n") {
				t.Errorf("want an error saying %q, got %v", tc.want, err)
			}
			if run.Scenario != "" && (run.Complete || !strings.Contains(run.Log, tc.log)) {
				t.Errorf("want the sale incomplete with the adapter's stderr kept, got complete %v, log %q", run.Complete, run.Log)
			}
			time.Sleep(100 * time.Millisecond) // the kernel reaps what was killed
			left := running(script)
			if tc.script == "hangs.sh" {
				left = append(left, running("sleep 61[78]")...) // what it started, too
			}
			if len(left) > 0 {
				t.Errorf("processes left behind: %v", left)
			}
		})
	}
}

// A queue adapter whose lease keys are not under the sale's keys is refused before any
// sale, in one line naming the key: an eviction touches only the run's keys.
func TestProbeReadsLeaseKeys(t *testing.T) {
	script, _ := filepath.Abs("testdata/strayleasekey.sh")
	c := redistest.Shared(t).Client(1)
	defer c.Close()
	_, err := ProbeQueue(context.Background(), Config{Name: "stray", Command: "/bin/sh " + script}, c)
	if want := `adapter stray: hello: lease_keys: "rq:wip:default" is not under the sale's keys ({stockbench:probe}...)`; err == nil || err.Error() != want {
		t.Errorf("want %q, got %v", want, err)
	}
	if left := running(script); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// An adapter that documents what no sale can earn is refused before any sale, in one
// line naming it and the field.
func TestProbeReadsDocumented(t *testing.T) {
	script, _ := filepath.Abs("testdata/baddoc.sh")
	c := redistest.Shared(t).Client(1)
	defer c.Close()
	_, err := Probe(context.Background(), Config{Name: "baddoc", Command: "/bin/sh " + script}, c)
	if want := `adapter baddoc: hello: documented.none: unknown class "FINE"`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("want %q, got %v", want, err)
	}
	if left := running(script); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// Under a Sentinel group and a cluster an adapter's own client follows the topology
// (hello names the sentinels and the master, or the seeds): redis-py's Sentinel and
// RedisCluster clients finish each sale with a verdict and no adapter failure.
func TestAdapterOnTopologies(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	impl := Lock(Config{Name: "redis-py", Command: "/usr/bin/python3 ../../../adapters/python/redis_py_lock.py", Procs: testProcs}, false)
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []faults.Kind{faults.SentinelKill, faults.ClusterMigrate} {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			s := sale
			s.Faults, s.Prefix = faults.Plan{{Kind: k}}, fmt.Sprintf("{adapter:topology:%s}", k)
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			if !run.Complete || run.Verdict.Class == oracle.ClassUnknown || run.Oracle.Bought == 0 {
				t.Errorf("want a whole sale with a verdict, got complete %v, %s, %d sold (%s)", run.Complete, run.Verdict.Cell(), run.Oracle.Bought, run.FirstError)
			}
		})
	}
}

// A whole purchase in the adapter's own code: the seed article's purchase, in PHP, sells
// the stock through the protocol's buy, on the server that holds the stock. Its steal
// race oversells in some runs, not all; a pause cannot reach a purchase the harness does
// not see inside, and the sale says so.
func TestBuyInPHP(t *testing.T) {
	need(t, "PHP with phpredis (php-cli, php-redis)", php...)
	impl := Lock(Config{Name: "php-buy", Command: "php ../../../adapters/php/seed-lock.php --buy", Procs: testProcs}, true)
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []faults.Plan{nil, {{Kind: faults.ClientPause}}, {{Kind: faults.RedisPause}}} {
		s := sale
		s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:buy:%s}", plan)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if !run.Complete || run.Errors > 0 || int64(run.Oracle.Bought) < s.Stock {
			t.Errorf("%s: want the stock sold without errors, got %d of %d, %d errors (%s)", plan, run.Oracle.Bought, s.Stock, run.Errors, run.FirstError)
		}
		if plan.Has(faults.ClientPause) && !slices.Contains(run.NotExercised, string(faults.ClientPause)) {
			t.Errorf("a pause cannot reach a whole purchase: want it named not exercised, got %s (%s)", run.Verdict.Cell(), run.Verdict)
		}
	}
}

// The seed article's sorted-set queue, in PHP with phpredis, earns what its Go port
// documents with either fulfil: the lock's steal race hands tasks to two workers with no
// fault at all (a naive fulfil applies them twice), and a worker killed with its task,
// SIGKILL of the process that handed it out having nothing to give back, loses it.
func TestSeedQueueInPHP(t *testing.T) {
	need(t, "PHP with phpredis (php-cli, php-redis)", php...)
	impl := Queue(Config{Name: "php-zset", Command: "php ../../../adapters/php/seed-queue.php", Procs: testProcs})
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, fulfil := range scenarios.Fulfils {
		want := queueDocumented(t, "seed-zset", fulfil)
		for _, k := range append([]faults.Kind{""}, faults.Kinds(faults.Queues)...) {
			var plan faults.Plan
			if k != "" {
				plan = faults.Plan{{Kind: k}}
			}
			s := sale
			s.Faults, s.Fulfil, s.Prefix = plan, fulfil, fmt.Sprintf("{adapter:zset:%s:%s}", plan, fulfil)
			classes, ok := want.For(plan)
			if !ok {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", plan, fulfil), func(t *testing.T) {
				run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
					return s.Run(ctx, red, impl)
				})
				if !slices.Contains(classes, run.Verdict.Class) || run.Queue.Oversold > 0 {
					t.Errorf("seed-zset documents %v, the adapter earned %s (%s)", classes, run.Verdict.Cell(), run.Verdict)
				}
				judged(t, run, classes)
			})
		}
	}
}

// A queue adapter with acknowledgement: a task stays with the process that handed it
// out until its ack, so a worker's crash is SIGKILL of that process, and a fresh one
// takes its place; with no reaper, the crashed workers' tasks are lost, exactly those.
func TestQueueWithAck(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ := filepath.Abs("testdata/ackqueue.py")
	// The pool's default size, the sale's connections, which the count below checks.
	impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script})
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, plan := range []faults.Plan{nil, {{Kind: faults.WorkerCrash}}} {
		s := sale
		s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:ack:%s}", plan)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		q := run.Queue
		if !run.Complete || q.Oversold > 0 || q.Lost != q.Crashed || (plan == nil && run.Verdict.Class != "SAFE") {
			t.Errorf("%s: want the crashed workers' tasks lost and nothing else, got %s (%s): %+v", plan, run.Verdict.Cell(), run.Verdict, q)
		}
		if plan != nil && q.Crashed == 0 {
			t.Errorf("%s: no worker crashed", plan)
		}
		// The pool, and one fresh process for each crashed worker's.
		if started, want := strings.Count(run.Log, "started"), s.WithDefaults().Conns+q.Crashed; started != want {
			t.Errorf("%s: want %d processes started, got %d", plan, want, started)
		}
	}
	if left := running(script); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// A deploy's SIGTERM to the process holding a task (worker-term): one that stops at once
// loses the task with it; one that drains is killed mid-task by the SIGKILL after the
// grace when the task is longer (lost too, with no reaper), and finishes and acks a task
// that fits in the grace. Each time a fresh process takes its place and none is left.
func TestWorkerTerm(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ := filepath.Abs("testdata/ackqueue.py")
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	// A visibility of 1 s: a grace of 500 ms, a task of 750 ms by default, and 50 ms for
	// the one that fits, well inside the grace on a loaded machine.
	sale.Visibility = time.Second
	for _, tc := range []struct {
		args    string
		fault   faults.Fault
		crashed int
	}{
		{"", faults.Fault{Kind: faults.WorkerTerm}, 1},
		{" --graceful", faults.Fault{Kind: faults.WorkerTerm}, 1},
		{" --graceful", faults.Fault{Kind: faults.WorkerTerm, For: 50 * time.Millisecond}, 0},
	} {
		impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script + tc.args, Procs: testProcs})
		s := sale
		s.Faults = faults.Plan{tc.fault}
		s.Prefix = fmt.Sprintf("{adapter:wterm:%s:%s}", tc.args, s.Faults)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		q, want := run.Queue, oracle.ClassSafe
		if tc.crashed > 0 {
			want = oracle.ClassLost
		}
		if run.Verdict.Class != want || q.Crashed != tc.crashed || q.Lost != tc.crashed || len(run.NotExercised) > 0 {
			t.Errorf("%q %s: want %s with %d worker crashed and lost, got %s, %d crashed, %d lost (%s)",
				tc.args, s.Faults, want, tc.crashed, run.Verdict.Cell(), q.Crashed, q.Lost, run.Verdict)
		}
		time.Sleep(100 * time.Millisecond)
		if left := running(script); len(left) > 0 {
			t.Errorf("%q: processes left behind: %v", tc.args, left)
		}
	}
}

var rqLib = []string{"/usr/bin/python3", "-c", "import rq"}

// RQ, its own enqueue and its own worker's bookkeeping: nothing is lost or done twice
// without a fault, nor when a worker stalls or dies after fulfilling; a worker killed
// mid-job (at once, or by the SIGKILL that ends a warm shutdown's wait for a job longer
// than the grace) leaves its job in RQ's started-job registry until the job's timeout
// plus 60 s, past the sale: exactly those jobs are lost. Every key RQ wrote is gone
// afterwards.
func TestRQ(t *testing.T) {
	need(t, "Debian's Python with redis-py and RQ (python3-redis, python3-rq)", rqLib...)
	impl := Queue(Config{Name: "rq", Command: "/usr/bin/python3 ../../../adapters/python/rq_queue.py", Procs: testProcs})
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	admin := redistest.Shared(t).Client(1)
	defer admin.Close()
	for _, fulfil := range scenarios.Fulfils {
		for _, k := range append([]faults.Kind{""}, faults.Kinds(faults.Queues)...) {
			var plan faults.Plan
			if k != "" {
				plan = faults.Plan{{Kind: k}}
			}
			t.Run(fmt.Sprintf("%s/%s", plan, fulfil), func(t *testing.T) {
				s := sale
				s.Faults, s.Fulfil, s.Prefix = plan, fulfil, fmt.Sprintf("{adapter:rq:%s:%s}", plan, fulfil)
				run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
					return s.Run(ctx, red, impl)
				})
				q := run.Queue
				want := oracle.ClassSafe
				switch k {
				case faults.WorkerCrash, faults.Reclaimers, faults.WorkerTerm: // killed mid-job, after a warm shutdown's wait
					want = oracle.ClassLost
					if q.Lost != q.Crashed || q.Crashed == 0 {
						t.Errorf("want the killed workers' jobs lost, nothing else: %+v", q)
					}
				case faults.RedisRestart: // the restart reaches RQ's connections: the queue is emptied
					want = oracle.ClassLost
				case faults.StepTerm, faults.EvictLease, faults.EvictJob, faults.ConsumerChurn: // it drives RQ's steps itself and names none, nor its keys
					want = oracle.ClassNotExercised
				}
				if run.Verdict.Class != want || q.Oversold > 0 {
					t.Errorf("want %s, got %s (%s): %+v", want, run.Verdict.Cell(), run.Verdict, q)
				}
				judged(t, run, []oracle.Class{want})
				if keys, _ := admin.Keys(context.Background(), s.Prefix+"*").Result(); len(keys) > 0 {
					t.Errorf("RQ's keys left behind: %v", keys)
				}
			})
		}
	}
}

var celeryLib = []string{"/usr/bin/python3", "-c", "import celery, kombu"}

// Celery's own worker (solo pool, acks_late, kombu's Redis transport) earns what its
// adapter documents in its hello, under every queue fault: a crashed worker's messages
// wait in kombu's unacked hash for a restore, which the fresh worker's start may do; one
// whose unacked index or hash was evicted before it died waits for good.
func TestCelery(t *testing.T) {
	need(t, "Debian's Python with Celery (python3-celery)", celeryLib...)
	queueEarns(t, Queue(Config{Name: "celery", Command: "/usr/bin/python3 ../../../adapters/python/celery_queue.py", Procs: testProcs}),
		func(f scenarios.Fulfil) faults.Verdicts {
			if f == scenarios.Idempotent {
				return celeryIdempotent
			}
			return celeryNaive
		})
}

// What the Celery adapter documents (celery_queue.py), asserted here as the record's.
var (
	celeryNaive = faults.Verdicts{None: safeClass, Under: map[faults.Kind][]oracle.Class{
		faults.WorkerCrash:     {oracle.ClassLost, oracle.ClassSafe, oracle.ClassDuplicated},
		faults.Reclaimers:      {oracle.ClassLost, oracle.ClassSafe, oracle.ClassDuplicated},
		faults.WorkerCrashLate: {oracle.ClassSafe, oracle.ClassDuplicated},
		faults.WorkerPause:     {oracle.ClassSafe, oracle.ClassDuplicated},
		faults.WorkerTerm:      {oracle.ClassLost, oracle.ClassSafe},
		faults.StepTerm:        notExercised,
		faults.EvictLease:      {oracle.ClassLost},
		faults.EvictJob:        {oracle.ClassLost},
		faults.ConsumerChurn:   notExercised,
		faults.RedisRestart:    {oracle.ClassLost}}}
	celeryIdempotent = faults.Verdicts{None: safeClass, Under: map[faults.Kind][]oracle.Class{
		faults.WorkerCrash: {oracle.ClassLost, oracle.ClassSafe}, faults.Reclaimers: {oracle.ClassLost, oracle.ClassSafe},
		faults.WorkerCrashLate: safeClass, faults.WorkerPause: safeClass, faults.WorkerTerm: {oracle.ClassLost, oracle.ClassSafe},
		faults.StepTerm: notExercised, faults.EvictLease: {oracle.ClassLost}, faults.EvictJob: {oracle.ClassLost},
		faults.ConsumerChurn: notExercised, faults.RedisRestart: {oracle.ClassLost}}}
	safeClass = []oracle.Class{oracle.ClassSafe}
	// notExercised: an adapter that names no steps of its library's loop (step-term).
	notExercised = []oracle.Class{oracle.ClassNotExercised}
)

var sidekiqLib = []string{"ruby", "-e", `require "sidekiq"; require "redis-namespace"`}

// Sidekiq's own push and BasicFetch earn what its adapter documents, at most once: a
// worker killed mid-job loses exactly its job (reliable fetch is Sidekiq Pro's), one
// killed after the job loses nothing, one sent SIGTERM pushes its job back before the
// SIGKILL, a restart of the server empties the queue.
func TestSidekiq(t *testing.T) {
	need(t, "Ruby with Debian's Sidekiq and redis-namespace (ruby-sidekiq, ruby-redis-namespace)", sidekiqLib...)
	atMostOnce := faults.Verdicts{None: safeClass, Under: map[faults.Kind][]oracle.Class{faults.WorkerCrash: {oracle.ClassLost},
		faults.Reclaimers: {oracle.ClassLost}, faults.WorkerCrashLate: safeClass, faults.WorkerPause: safeClass,
		faults.WorkerTerm: safeClass, faults.StepTerm: notExercised, faults.EvictLease: notExercised,
		faults.EvictJob: notExercised, faults.ConsumerChurn: notExercised, faults.RedisRestart: {oracle.ClassLost}}}
	queueEarns(t, Queue(Config{Name: "sidekiq", Command: "ruby ../../../adapters/ruby/bin/stockbench-sidekiq-queue", Procs: testProcs}),
		func(scenarios.Fulfil) faults.Verdicts { return atMostOnce })
}

// queueEarns runs impl under no fault and each queue fault, with each fulfil, and checks
// that each sale earned, and its record was judged by, what documented says.
func queueEarns(t *testing.T, impl queueimpl.Impl, documented func(scenarios.Fulfil) faults.Verdicts) {
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, fulfil := range scenarios.Fulfils {
		for _, k := range append([]faults.Kind{""}, faults.Kinds(faults.Queues)...) {
			var plan faults.Plan
			if k != "" {
				plan = faults.Plan{{Kind: k}}
			}
			classes, _ := documented(fulfil).For(plan)
			t.Run(fmt.Sprintf("%s/%s", plan, fulfil), func(t *testing.T) {
				s := sale
				s.Faults, s.Fulfil, s.Prefix = plan, fulfil, fmt.Sprintf("{adapter:%s:%s:%s}", impl.Name, plan, fulfil)
				run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
					return s.Run(ctx, red, impl)
				})
				if !slices.Contains(classes, run.Verdict.Class) || run.Queue.Oversold > 0 {
					t.Errorf("%s documents %v, it earned %s (%s)", impl.Name, classes, run.Verdict.Cell(), run.Verdict)
				}
				judged(t, run, classes)
			})
		}
	}
}

// RQ's own worker loop (--worker-loop): what the adapter driving RQ's steps earns, and a
// deploy's SIGTERM between the loop's dequeue and its started mark (step-term, reported
// by the adapter) loses exactly the job the loop took: rq/rq#2236. A report hello did
// not ask for ends the sale in one line.
func TestRQWorkerLoop(t *testing.T) {
	need(t, "Debian's Python with redis-py and RQ (python3-redis, python3-rq)", rqLib...)
	impl := Queue(Config{Name: "rq-loop", Command: "/usr/bin/python3 ../../../adapters/python/rq_queue.py --worker-loop", Procs: 4})
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	sale.Buyers, sale.Stock = 40, 40
	for _, tc := range []struct {
		plan string
		want oracle.Class
	}{{"none", oracle.ClassSafe}, {"worker-crash", oracle.ClassLost}, {"step-term", oracle.ClassLost}, {"step-term:step=prepared", oracle.ClassNotExercised}} {
		plan, err := faults.Parse(tc.plan)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(tc.plan, func(t *testing.T) {
			s := sale
			s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:rq-loop:%s}", plan)
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			q := run.Queue
			if run.Verdict.Class != tc.want || (tc.plan == "step-term" && q.Lost != 1) || q.Oversold > 0 || q.DuplicatedEffects > 0 {
				t.Errorf("want %s (one job lost under step-term), got %s (%s): %+v; events %+v", tc.want, run.Verdict.Cell(), run.Verdict, q, run.Events)
			}
			if tc.plan == "step-term" && (len(run.Events) == 0 || !strings.Contains(run.Events[0].Detail, "at step dequeued")) {
				t.Errorf("want the strike at the step recorded, got %+v", run.Events)
			}
			documented := plan.String() != "step-term:step=prepared" // a step it does not name: not asserted
			if documented != (run.AsExpected != nil) || (documented && !*run.AsExpected) {
				t.Errorf("the adapter documents %v, it earned %s (judged: %v)", run.Expected, run.Verdict.Cell(), run.AsExpected != nil)
			}
		})
	}
	// A process that reports a step nobody asked for breaks the sale, as a stray reply.
	stray, _ := filepath.Abs("testdata/straystep.sh")
	s := sale
	s.Prefix = "{adapter:straystep}"
	c := redistest.Shared(t).Client(2)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := s.Run(ctx, scenarios.Single(c), Queue(Config{Name: "straystep", Command: "/bin/sh " + stray, Procs: 1}))
	if err == nil || !strings.Contains(err.Error(), `adapter straystep: reported step "dequeued", which hello did not ask for`) {
		t.Errorf("want the sale ended by the stray report, got %v (%s)", err, run.Verdict.Cell())
	}
}

// A deploy's SIGTERM: a process that stops at once dies holding the lock, its request
// with it (crashed, as the shipped adapters do); one that drains finishes its request,
// writes and releases, and then goes; either way a fresh process takes its place and
// none is left.
func TestTermHolder(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ := filepath.Abs("testdata/renewlock.py")
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    string
		crashed int
	}{{"", 1}, {" --graceful", 0}} {
		impl := Lock(Config{Name: "renewlock", Command: "/usr/bin/python3 " + script + tc.args, Procs: testProcs}, false)
		s := sale
		s.Faults, s.Prefix = faults.Plan{{Kind: faults.TermHolder}}, fmt.Sprintf("{adapter:term:%s}", tc.args)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if run.Verdict.Class != oracle.ClassSafe || run.Oracle.Crashed != tc.crashed || run.Oracle.Bought != int(s.Stock) {
			t.Errorf("%q: want SAFE with %d holder crashed and the stock sold, got %s, %d crashed, %d sold (%s)",
				tc.args, tc.crashed, run.Verdict.Cell(), run.Oracle.Crashed, run.Oracle.Bought, run.Verdict)
		}
		time.Sleep(100 * time.Millisecond)
		if left := running(script); len(left) > 0 {
			t.Errorf("%q: processes left behind: %v", tc.args, left)
		}
	}
}

// An adapter that supports renew is renewed every TTL/3 while a lease is held, and a
// pause stops the renewals with the process: it earns what token-watchdog documents,
// safe under slow work, an oversell under a pause.
func TestRenewingAdapter(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ := filepath.Abs("testdata/renewlock.py")
	impl := Lock(Config{Name: "renewlock", Command: "/usr/bin/python3 " + script, Procs: testProcs}, false)
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	want := lockDocumented(t, "token-watchdog")
	// Starved, its process answers the renewals late, not never: it lives through what a
	// pause of the same length breaks.
	for _, plan := range []faults.Plan{nil, {{Kind: faults.SlowWork}}, {{Kind: faults.CPUStarve}}, {{Kind: faults.ClientPause}}} {
		classes, _ := want.For(plan)
		s := sale
		s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:renew:%s}", plan)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if !slices.Contains(classes, run.Verdict.Class) || run.Oracle.RenewalsAfterRelease > 0 {
			t.Errorf("%s: token-watchdog documents %v, the adapter earned %s (%s)", plan, classes, run.Verdict.Cell(), run.Verdict)
		}
	}
}

// An adapter that hands out fencing tokens gets its holders' reads and writes checked by
// the stock store: a paused holder's late write is refused, and nothing is oversold, as
// fencing documents.
func TestFencingAdapter(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ := filepath.Abs("testdata/renewlock.py")
	impl := Lock(Config{Name: "fencelock", Command: "/usr/bin/python3 " + script + " --fence", Procs: testProcs}, false)
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	want := lockDocumented(t, "fencing")
	for _, plan := range []faults.Plan{nil, {{Kind: faults.ClientPause}}} {
		classes, _ := want.For(plan)
		s := sale
		s.Faults, s.Prefix = plan, fmt.Sprintf("{adapter:fence:%s}", plan)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if !slices.Contains(classes, run.Verdict.Class) {
			t.Errorf("%s: fencing documents %v, the adapter earned %s (%s)", plan, classes, run.Verdict.Cell(), run.Verdict)
		}
	}
}

// A starved process runs a tenth of the time and is stopped the rest, as under a CPU
// quota; once the starvation ends it runs on.
func TestStarvedProcess(t *testing.T) {
	script, _ := filepath.Abs("testdata/strayid.sh") // says hello, then reads
	pr, _, err := start(context.Background(), "starved", []string{"/bin/sh", script}, request{Op: "hello", Protocol: 1}, &tail{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pr.kill()
	state := func() byte {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pr.cmd.Process.Pid))
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
			return b[i+2]
		}
		return '?'
	}
	until := time.Now().Add(600 * time.Millisecond)
	go pr.starve(until, faults.StarveRun, faults.StarvePeriod)
	stopped, running := 0, 0
	for time.Now().Before(until.Add(-20 * time.Millisecond)) {
		if state() == 'T' {
			stopped++
		} else {
			running++
		}
		time.Sleep(3 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if stopped < 4*running || running == 0 || state() == 'T' {
		t.Errorf("want the process stopped about 9 samples in 10 and running after: %d stopped, %d running, now %c", stopped, running, state())
	}
}
