//go:build long

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
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

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
	earns(t, Lock(Config{Name: "redis-py", Command: "/usr/bin/python3 ../../../adapters/python/redis_py_lock.py", Procs: testProcs}, false), "")
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
// what its hello documents: its holders ask Until() before each write, where the
// built-in design's write without asking, so it is judged by its own word.
func TestGoAdapterAtItsOwnVersion(t *testing.T) {
	bin := goAdapter(t, "redsync-lock")
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
	earns(t, Lock(Config{Name: "redsync-4.8.1", Command: bin, Procs: testProcs}, false), "")
}

// The same adapter as Redlock over five servers (it supports nodes; hello names each
// server's front), renewing its leases with Extend: slow work no longer outlives the
// lease, where without renewals it does, as the built-in redlock documents.
func TestGoAdapterOnFiveServers(t *testing.T) {
	bin := goAdapter(t, "redsync-lock")
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

// A deploy's SIGTERM to the process holding a task (worker-term): one that stops at once
// loses the task with it; one that drains is killed mid-task by the SIGKILL after the
// grace when the task is longer (lost too, with no reaper), and finishes and acks a task
// that fits in the grace. Each time a fresh process takes its place and none is left.
func TestWorkerTerm(t *testing.T) {
	script, h, sale := onAckqueue(t)
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
		if left := leftBehind(reaped, script); len(left) > 0 {
			t.Errorf("%q: processes left behind: %v", tc.args, left)
		}
	}
}

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

// Celery at kombu's own clock: at a visibility timeout longer than a worker's restart
// takes, a crashed worker's messages come back only at a restore pass, every 100 s; the
// adapter's hello says so (redelivery_ms) and the sale waits for the pass: the task is
// done, not lost. Below a second the sale does not wait (TestCelery), and with the
// hello silent this sale would end 2 visibility timeouts after its last take, LOST.
func TestCeleryOwnClock(t *testing.T) {
	need(t, "Debian's Python with Celery (python3-celery)", celeryLib...)
	h := rigtest.Harness(t)
	impl := Queue(Config{Name: "celery", Command: "/usr/bin/python3 ../../../adapters/python/celery_queue.py", Procs: testProcs})
	s, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	plan := faults.Plan{{Kind: faults.WorkerCrash}}
	s.Faults, s.Visibility, s.Prefix = plan, 5*time.Second, fmt.Sprintf("{adapter:celery-clock:%d}", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute) // past rigtest.On's minute: the pass is 100 s
	defer cancel()
	run, err := rig.On(ctx, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
		return s.Run(ctx, red, impl)
	})
	if err != nil {
		t.Fatal(err)
	}
	q := run.Queue
	if !run.Complete || q.Crashed == 0 || q.Lost > 0 || q.Oversold > 0 || !slices.Contains([]oracle.Class{oracle.ClassSafe, oracle.ClassDuplicated}, run.Verdict.Class) {
		t.Errorf("want the crashed workers' tasks back at kombu's pass, none lost: %s (%s), complete %v: %+v", run.Verdict.Cell(), run.Verdict, run.Complete, q)
	}
	if run.Duration < 80*time.Second {
		t.Errorf("the sale ended after %s, before kombu's restore pass (100 s from the workers' start) gave the tasks back", run.Duration)
	}
}

// Sidekiq's own push, Manager, Processor and BasicFetch earn what its adapter documents,
// at most once: a worker killed mid-job loses exactly its job (reliable fetch is Sidekiq
// Pro's), one killed after the job loses nothing, one sent SIGTERM pushes its job back
// (Manager#hard_shutdown, at its whole-second -t) before the SIGKILL, a restart of the
// server empties the queue. The sale runs at Sidekiq's clock: a visibility timeout of
// 3 s gives a deploy's grace of 1.5 s, and -t 1.
func TestSidekiq(t *testing.T) {
	need(t, "Ruby with Debian's Sidekiq and redis-namespace (ruby-sidekiq, ruby-redis-namespace)", sidekiqLib...)
	atMostOnce := faults.Verdicts{None: safeClass, Under: map[faults.Kind][]oracle.Class{faults.WorkerCrash: {oracle.ClassLost},
		faults.Reclaimers: {oracle.ClassLost}, faults.WorkerCrashLate: safeClass, faults.WorkerPause: safeClass,
		faults.WorkerTerm: safeClass, faults.StepTerm: notExercised, faults.EvictLease: notExercised,
		faults.EvictJob: notExercised, faults.ConsumerChurn: notExercised, faults.RedisRestart: {oracle.ClassLost}}}
	queueEarns(t, Queue(Config{Name: "sidekiq", Command: "ruby ../../../adapters/ruby/bin/stockbench-sidekiq-queue", Procs: testProcs}),
		func(scenarios.Fulfil) faults.Verdicts { return atMostOnce },
		func(s *scenarios.QueueSale) { s.Visibility = 3 * time.Second })
}

// asynq's own Client and, in each worker process, its own Server (adapters/go/asynq-queue,
// built as --queue-go builds it) earn what the adapter documents: nothing lost or done
// twice while the workers live; a deploy's SIGTERM is asynq's Stop and Shutdown, which
// pushes the task in hand back to Redis before the process exits, so another worker
// does it (SAFE, never NOT-EXERCISED: the fault strikes a process); a stall shorter
// than the 30 s lease keeps it; a restart empties the queue. A killed worker's task
// waits out asynq's lease and the recoverer's cutoff and minute: with --redelivery 0 the
// sale ends twice the visibility timeout after its last take, before that (LOST, or SAFE
// where no killed worker held one); at the adapter's default its hello says
// redelivery_ms (126 s), the sale waits for the recoverer, and the task comes back. The
// sales run with a visibility timeout of 3 s: a deploy's grace of 1.5 s, asynq's
// shutdown timeout 0.4 s of it.
func TestAsynq(t *testing.T) {
	bin := goAdapter(t, "asynq-queue")
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	safeOrDup := []oracle.Class{oracle.ClassSafe, oracle.ClassDuplicated}
	lost := []oracle.Class{oracle.ClassSafe, oracle.ClassLost, oracle.ClassDuplicated}
	for _, tc := range []struct {
		fault faults.Kind
		args  string
		want  []oracle.Class
	}{
		{"", " --redelivery 0", safeClass},
		{faults.WorkerTerm, " --redelivery 0", safeClass},
		{faults.WorkerPause, " --redelivery 0", safeClass},
		{faults.WorkerCrash, " --redelivery 0", lost},
		{faults.WorkerCrashLate, " --redelivery 0", safeOrDup},
		{faults.RedisRestart, " --redelivery 0", []oracle.Class{oracle.ClassLost}},
		{faults.StepTerm, " --redelivery 0", notExercised},
		{faults.WorkerCrash, "", safeOrDup}, // waits for the recoverer
	} {
		var plan faults.Plan
		if tc.fault != "" {
			plan = faults.Plan{{Kind: tc.fault}}
		}
		t.Run(fmt.Sprintf("%s%s", plan, tc.args), func(t *testing.T) {
			s := sale
			s.Visibility, s.Faults, s.Prefix = 3*time.Second, plan, fmt.Sprintf("{adapter:asynq:%s:%s}", plan, tc.args)
			impl := Queue(Config{Name: "asynq", Command: bin + tc.args, Procs: testProcs})
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				if tc.args == "" { // the sale waits past rigtest's minute for the recoverer
					c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 4*time.Minute)
					defer cancel()
					ctx = c
				}
				return s.Run(ctx, red, impl)
			})
			q := run.Queue
			if !slices.Contains(tc.want, run.Verdict.Class) || q.Oversold > 0 {
				t.Errorf("want one of %v, got %s (%s): %+v", tc.want, run.Verdict.Cell(), run.Verdict, q)
			}
			if tc.fault == faults.WorkerCrash && tc.args == "" && (q.Crashed == 0 || q.Lost > 0) {
				t.Errorf("want the killed workers' tasks given back by the recoverer, none lost: %+v", q)
			}
			judged(t, run, tc.want)
		})
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

// TestPythonPackage installs adapters/python as pip would for a user (into a virtual
// environment that sees Debian's redis-py and RQ, offline, so every dependency it declares
// must be met by the versions it states it was tested with), and runs the installed
// command in a sale: it earns what the token lock documents with no fault.
func TestPythonPackage(t *testing.T) {
	need(t, "Debian's Python with redis-py and RQ (python3-redis, python3-rq)", rqLib...)
	need(t, "Debian's Python with Celery (python3-celery)", celeryLib...)
	need(t, "Debian's Python with venv and pip", "/usr/bin/python3", "-c", "import venv, pip")
	venv := t.TempDir()
	// pip builds in the source tree (build/, *.egg-info): build a copy, leave the checkout.
	pkg := filepath.Join(t.TempDir(), "python")
	if err := os.CopyFS(pkg, os.DirFS("../../../adapters/python")); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"/usr/bin/python3", "-m", "venv", "--system-site-packages", "--without-pip", venv},
		{"/usr/bin/python3", "-m", "pip", "--python", venv + "/bin/python", "install", "--quiet", "--no-index", "--no-build-isolation", pkg + "[rq,celery]"},
	} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	// The versions pyproject.toml says the verdicts were measured with are the ones here.
	out, err := exec.Command(venv+"/bin/python", "-c", `
import importlib.metadata as m, platform, tomllib
with open("`+pkg+`/pyproject.toml", "rb") as f:
    said = tomllib.load(f)["tool"]["stockbench"]["tested-with"]
print(said["python"], platform.python_version())
for d in ("redis", "rq", "celery", "kombu"):
    print(said[d], m.version(d))
`).CombinedOutput()
	if err != nil {
		t.Fatalf("reading the stated versions: %v\n%s", err, out)
	}
	sameVersions(t, "pyproject.toml", out)
	for _, cmd := range []string{"stockbench-redis-py-lock", "stockbench-rq-queue", "stockbench-celery-queue"} {
		if _, err := os.Stat(filepath.Join(venv, "bin", cmd)); err != nil {
			t.Errorf("the package installs no %s: %v", cmd, err)
		}
	}
	earns(t, Lock(Config{Name: "redis-py-installed", Command: venv + "/bin/stockbench-redis-py-lock", Procs: testProcs}, false), "token", "")
}
