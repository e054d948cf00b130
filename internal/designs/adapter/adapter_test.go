package adapter

import (
	"context"
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
// what their Go counterparts do. An adapter whose holders ask its library "still held?"
// before they write (held) has no Go counterpart: documented "" judges it by its hello
// alone.
func earns(t *testing.T, impl lockimpl.Impl, documented string, only ...faults.Kind) {
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	var want faults.Verdicts
	if documented != "" {
		want = lockDocumented(t, documented)
	}
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
		if documented == "" {
			classes, ok = nil, true
		}
		if k == faults.TermHolder {
			// The Go counterpart's holders are goroutines, which no SIGTERM reaches; the
			// shipped adapters stop at once on it, as a crashed holder.
			classes, ok = want.For(faults.Plan{{Kind: faults.CrashHolder}})
		}
		if k == faults.AppPause {
			// Nor does a SIGSTOP: the Go counterpart is NOT-EXERCISED, while a shipped
			// adapter's instance is its processes, stopped together as under client-pause.
			classes, ok = want.For(faults.Plan{{Kind: faults.ClientPause}})
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

// nodeRedis checks for Node.js with Debian's node-redis, where the adapter finds it.
var (
	nodeRedisVersion = "module.paths.push('/usr/share/nodejs'); console.log(require('redis/package.json').version)"
	nodeRedis        = []string{"node", "-e", nodeRedisVersion}
)

// running lists the processes whose command line holds one of markers (pgrep patterns).
func running(markers ...string) []string {
	var procs []string
	for _, marker := range markers {
		out, _ := exec.Command("pgrep", "-af", marker).Output()
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" && !strings.Contains(l, "pgrep") {
				procs = append(procs, l)
			}
		}
	}
	return procs
}

// leftBehind lists the processes matching markers still running once within has
// passed, or none as soon as none is. A sale's own processes are gone when it returns;
// what they started dies with their group but is reaped by init in its own time, which
// on a busy machine is not within a fixed sleep.
func leftBehind(within time.Duration, markers ...string) []string {
	deadline := time.Now().Add(within)
	for {
		left := running(markers...)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// reaped is how long a test gives what a sale killed to be gone: the pool's own wait for
// a killed process (proc.kill), past which the harness itself would have moved on.
const reaped = 5 * time.Second

// The leftover check sees a process that stays, past its deadline, and only one that
// stays: one that exits within it is not reported.
func TestLeftBehindSeesAProcessThatStays(t *testing.T) {
	marker := fmt.Sprintf("stockbench-left-%d", os.Getpid())
	stays := exec.Command("/bin/sh", "-c", "sleep 30; : "+marker)
	if err := stays.Start(); err != nil {
		t.Fatal(err)
	}
	defer stays.Wait()
	defer stays.Process.Kill()
	if left := leftBehind(300*time.Millisecond, marker); len(left) != 1 {
		t.Fatalf("a process that stays: want it reported, got %v", left)
	}
	goes := exec.Command("/bin/sh", "-c", "sleep 0.2; : "+marker+"-goes")
	if err := goes.Start(); err != nil {
		t.Fatal(err)
	}
	go goes.Wait()
	if left := leftBehind(reaped, marker+"-goes"); len(left) != 0 {
		t.Errorf("a process that exits within the deadline: want nothing reported, got %v", left)
	}
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
		{"hangs.sh", `adapter hangs: did not answer try within 2s`, ""},
		{"badversion.sh", `adapter badversion: answered hello in protocol 4; the harness speaks [1 2 3]`, ""},
		{"crashes.sh", `adapter crashes: exited (exit status 139); stderr: Segmentation fault (core dumped)`, "Segmentation fault"},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Parallel()
			script, _ := filepath.Abs(filepath.Join("testdata", tc.script))
			name := strings.TrimSuffix(tc.script, ".sh")
			impl := Lock(Config{Name: name, Command: "/bin/sh " + script, Procs: 2, Patience: 2 * time.Second}, false)
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
			markers := []string{script}
			if tc.script == "hangs.sh" {
				markers = append(markers, "sleep 61[78]") // what it started, too
			}
			if left := leftBehind(reaped, markers...); len(left) > 0 {
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
	if left := leftBehind(reaped, script); len(left) > 0 {
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
	if left := leftBehind(reaped, script); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
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

// A queue adapter with acknowledgement: a task stays with the process that handed it
// out until its ack, so a worker's crash is SIGKILL of that process, and a fresh one
// takes its place; with no reaper, the crashed workers' tasks are lost, exactly those.
func TestQueueWithAck(t *testing.T) {
	script, h, sale := onAckqueue(t)
	// The pool's default size, the sale's connections, which the count below checks;
	// eight of them, as testProcs: the sale's 32 spent most of the test starting Pythons.
	impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script})
	for _, plan := range []faults.Plan{nil, {{Kind: faults.WorkerCrash}}} {
		s := sale
		s.Faults, s.Prefix, s.Conns = plan, fmt.Sprintf("{adapter:ack:%s}", plan), testProcs
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
	if left := leftBehind(reaped, script); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
}

// A library's worker that holds a task it took (Celery's, RQ's) hands it out only when
// its process is asked: a sale in which nothing moves asks every process twice before it
// ends, however long each ask takes. Here each process keeps the orders it is sent and
// answers an empty ask 400 ms late, to one worker: the quiet period timed at 100 ms an
// ask (0.9 s) ended the sale with orders still held (LOST 1 to 6 in 4 of 5 runs).
func TestQueueAsksEveryProcess(t *testing.T) {
	script, h, sale := onAckqueue(t)
	impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script + " --hoard --slow-empty-ms 400"})
	s := sale
	s.Prefix, s.Conns, s.Workers, s.Buyers, s.Stock = "{adapter:hoard}", 4, 1, 20, 20
	run := rigtest.On(t, h, rig.Need{Nodes: 1, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
		return s.Run(ctx, red, impl)
	})
	if q := run.Queue; !run.Complete || run.Verdict.Class != "SAFE" || q.Lost > 0 || q.Fulfilled != 20 {
		t.Errorf("want every order asked for and fulfilled, got %s (%s): %+v", run.Verdict.Cell(), run.Verdict, q)
	}
}

// A stalled worker's process that ends itself as it wakes (its library's own timeout,
// fallen due while it was stopped) takes its task's work with it, as it would the job's
// code it runs: the harness's worker does not do it. One that answers the wake does.
func TestQueueWakesStalledProcess(t *testing.T) {
	script, h, sale := onAckqueue(t)
	plan := faults.Plan{{Kind: faults.WorkerPause}}
	for _, tc := range []struct {
		args            string
		fulfilled, lost int
		woke            bool // the sale records the process's end as it woke
	}{
		{"", 20, 0, false},
		{"--exit-on-wake", 19, 1, true},
	} {
		t.Run("args="+tc.args, func(t *testing.T) {
			s := sale
			s.Faults, s.Prefix, s.Conns, s.Buyers, s.Stock = plan, fmt.Sprintf("{adapter:wake:%s}", tc.args), testProcs, 20, 20
			impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script + " " + tc.args})
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			q := run.Queue
			if !run.Complete || q.Fulfilled != tc.fulfilled || q.Lost != tc.lost {
				t.Errorf("want %d fulfilled and %d lost, got %s (%s), complete %v, %s: %+v", tc.fulfilled, tc.lost, run.Verdict.Cell(), run.Verdict, run.Complete, run.Error, q)
			}
			woke := slices.ContainsFunc(run.Events, func(e faults.Event) bool { return strings.Contains(e.Detail, "ended itself as it woke") })
			if woke != tc.woke {
				t.Errorf("want the process's end as it woke recorded %v, got %v: %+v", tc.woke, woke, run.Events)
			}
		})
	}
}

// onAckqueue is what a test of testdata/ackqueue.py starts from: the script's path, the
// harness and the queue sale; it skips without Debian's Python and redis-py.
func onAckqueue(t *testing.T) (script string, h *rig.Harness, sale scenarios.QueueSale) {
	t.Helper()
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ = filepath.Abs("testdata/ackqueue.py")
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	return script, rigtest.Harness(t), sale
}

var rqLib = []string{"/usr/bin/python3", "-c", "import rq"}

var celeryLib = []string{"/usr/bin/python3", "-c", "import celery, kombu"}

// A queue library's own clock and its own exits: a sale waits for the redelivery its
// adapter's hello says (redelivery_ms) before it calls a task lost, however short the
// visibility timeout; a process that exits of its own accord holding a task (at its
// ack), or between tasks (after one), is replaced as a supervisor would, the task its
// library's affair: the sale goes on, complete, and sells its stock.
func TestQueueProcessesOwnClock(t *testing.T) {
	script, h, sale := onAckqueue(t)
	for _, tc := range []struct {
		args    string
		plan    faults.Plan
		atLeast time.Duration // the sale's least length
	}{
		{"--redelivery-ms 3000", faults.Plan{{Kind: faults.WorkerCrash}}, 3 * time.Second},
		{"--exit-at-ack 5", nil, 0},
		{"--exit-after-ack 5", nil, 0},
		// A crash (exit 1) is restarted too, and a successor that cannot connect yet is
		// started again a second later, as a supervisor does.
		{"--crash-at-ack 5 --once", nil, time.Second},
	} {
		t.Run(tc.args, func(t *testing.T) {
			s := sale
			s.Faults, s.Prefix, s.Conns = tc.plan, fmt.Sprintf("{adapter:own:%s:%d}", tc.args, time.Now().UnixNano()), testProcs
			impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script + " " + tc.args})
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: tc.plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			q := run.Queue
			if !run.Complete || q.Oversold > 0 || int64(q.Fulfilled) < s.Stock && tc.plan == nil {
				t.Errorf("want a complete sale of the stock, got %s (%s), complete %v, %s: %+v", run.Verdict.Cell(), run.Verdict, run.Complete, run.Error, q)
			}
			if run.Duration < tc.atLeast {
				t.Errorf("the sale ended after %s, before the %s its adapter's clock says a task may take to come back", run.Duration, tc.atLeast)
			}
			if strings.Contains(tc.args, "-at-ack") && !strings.Contains(run.Log, "a fresh one takes its place") {
				t.Errorf("want the process that exited replaced and said so; its log:\n%s", run.Log)
			}
		})
	}
	// A process that crashes at every first ack is restarted only so often: then the
	// adapter is broken, in one line, and the sale incomplete.
	t.Run("crash loop", func(t *testing.T) {
		s := sale
		s.Prefix, s.Conns = "{adapter:own:loop}", testProcs
		impl := Queue(Config{Name: "ackqueue", Command: "/usr/bin/python3 " + script + " --crash-at-ack 1"})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		run, err := rig.On(ctx, h, rig.Need{Nodes: 1, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if err == nil || run.Complete || !strings.Contains(err.Error(), "adapter ackqueue: exited (exit status 1)") {
			t.Errorf("want the sale incomplete on the adapter's crashes, got complete %v: %v", run.Complete, err)
		}
	})
	t.Cleanup(func() {
		marks, _ := filepath.Glob("/tmp/ackqueue-adapter-own-*")
		for _, m := range marks {
			os.Remove(m)
		}
	})
	if left := leftBehind(reaped, script); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
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

// queueEarns runs impl under no fault and each queue fault, with each fulfil, and checks
// that each sale earned, and its record was judged by, what documented says.
// tune, when given, sets the sale at the library's own clock.
func queueEarns(t *testing.T, impl queueimpl.Impl, documented func(scenarios.Fulfil) faults.Verdicts, tune ...func(*scenarios.QueueSale)) {
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range tune {
		f(&sale)
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
		if left := leftBehind(reaped, script+tc.args+"$"); len(left) > 0 {
			t.Errorf("%q: processes left behind: %v", tc.args, left)
		}
	}
}

// A holder asks its adapter's library "still held?" right before it writes (held), and
// does not write on a no. An adapter that always says no sells nothing, every holder
// withdrawing; one that answers by GET against its token (redis-py's owned()) keeps a
// holder paused past its TTL (client-pause) from its late write, which the same adapter
// not asked makes (LOST or OVERSOLD): the paused holder hears no and withdraws. The
// pause outlasts the TTL by half of it, so the key is gone or another's when it asks.
// Its hold still overlapped the next holder's, in time, while it was paused: OVERLAP,
// with nothing lost.
func TestHolderToldNoDoesNotWrite(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	script, _ := filepath.Abs("testdata/renewlock.py")
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		plan faults.Plan
		ok   func(results.Run) bool
		want string
	}{
		{" --held-never", nil, func(r results.Run) bool {
			return r.Oracle.Bought == 0 && r.Oracle.Withdrew > 0 && r.Oracle.OrdersRecorded == 0 && r.Oracle.FinalStock == r.Oracle.InitialStock
		}, "nothing sold, every holder withdrawn, the stock untouched"},
		{"", faults.Plan{{Kind: faults.ClientPause}}, func(r results.Run) bool {
			return r.Oracle.Withdrew == 0 && (r.Oracle.LostUpdates > 0 || r.Oracle.Oversold > 0)
		}, "the paused holder's late write (LOST or OVERSOLD), nobody withdrawn"},
		{" --held", faults.Plan{{Kind: faults.ClientPause}}, func(r results.Run) bool {
			return (r.Verdict.Class == oracle.ClassSafe || r.Verdict.Class == oracle.ClassOverlap) && r.Oracle.Withdrew >= 1 &&
				r.Oracle.LostUpdates == 0 && r.Oracle.Oversold == 0 && r.Oracle.Bought == int(r.Oracle.InitialStock)
		}, "nothing lost or oversold (SAFE or OVERLAP), the paused holder withdrawn, the stock sold"},
		// The same with the holder's whole application instance stopped (every process of
		// its pool), the other instance selling meanwhile.
		{"", faults.Plan{{Kind: faults.AppPause}}, func(r results.Run) bool {
			return r.Oracle.Withdrew == 0 && (r.Oracle.LostUpdates > 0 || r.Oracle.Oversold > 0)
		}, "the paused holder's late write (LOST or OVERSOLD), nobody withdrawn"},
		{" --held", faults.Plan{{Kind: faults.AppPause}}, func(r results.Run) bool {
			return (r.Verdict.Class == oracle.ClassSafe || r.Verdict.Class == oracle.ClassOverlap) && r.Oracle.Withdrew >= 1 &&
				r.Oracle.LostUpdates == 0 && r.Oracle.Oversold == 0 && r.Oracle.Bought == int(r.Oracle.InitialStock)
		}, "nothing lost or oversold (SAFE or OVERLAP), the paused holder withdrawn, the stock sold"},
	} {
		impl := Lock(Config{Name: "heldlock", Command: "/usr/bin/python3 " + script + tc.args, Procs: testProcs}, false)
		s := sale
		s.Faults, s.Prefix = tc.plan, fmt.Sprintf("{adapter:held:%s:%s}", tc.args, tc.plan)
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if k, _ := tc.plan.PerApp(); k == faults.AppPause {
			stopped := fmt.Sprintf("its %d processes stopped", testProcs)
			if len(run.Events) != 1 || !strings.Contains(run.Events[0].Detail, stopped) {
				t.Errorf("%q under app-pause: want one event, %q, got %+v", tc.args, stopped, run.Events)
			}
		}
		if told := "did not write, told by the lock's library"; (run.Oracle.Withdrew > 0) != strings.Contains(run.Consequence(), told) {
			t.Errorf("%q: %d withdrew, and the consequence reads %q", tc.args, run.Oracle.Withdrew, run.Consequence())
		}
		if !tc.ok(run) {
			t.Errorf("%q under %s: want %s, got %s: %d bought, %d withdrew, %d orders, stock %d of %d (%s)", tc.args, tc.plan,
				tc.want, run.Verdict.Cell(), run.Oracle.Bought, run.Oracle.Withdrew, run.Oracle.OrdersRecorded,
				run.Oracle.FinalStock, run.Oracle.InitialStock, run.Verdict)
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
	pr, _, err := start(context.Background(), "starved", []string{"/bin/sh", script}, DefaultPatience, request{Op: "hello", Protocol: 1}, &tail{}, nil)
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

// A process struck by a deploy's SIGTERM as the sale ends: its successor starts in the
// background once it is gone, and stop waits for that start and ends the successor, so
// that nothing of the pool outlives the sale, at once rather than after a grace.
func TestStopEndsAStruckProcessesSuccessor(t *testing.T) {
	// Its own name, so that no other test's processes are counted; it starts as slowly
	// as an interpreter importing its client library, and dies at once on SIGTERM.
	script := filepath.Join(t.TempDir(), "struck.sh")
	if err := os.WriteFile(script, []byte("sleep 0.3\nread hello\necho '{\"ok\":true,\"supports\":[\"lock\"]}'\nwhile read req; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := newPool(context.Background(), "struck", []string{"/bin/sh", script}, DefaultPatience, 1, request{Op: "hello", Protocol: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	<-p.terminate(<-p.idle, time.Second) // gone at once: its successor is starting
	p.stop()
	if left := running(script); len(left) > 0 {
		t.Errorf("processes left once stop returned: %v", left)
	}
}
