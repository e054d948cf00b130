//go:build long

package adapter

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

var (
	symfonyLock = []string{"php", "-r", "require '/usr/share/php/Symfony/Component/Lock/autoload.php'; exit(class_exists('Redis') && class_exists('Symfony\\Component\\Lock\\Store\\RedisStore') ? 0 : 1);"}
	laravel     = []string{"php", "-r", "require '/usr/share/php/Illuminate/autoload.php'; exit(class_exists('Redis') && class_exists('Illuminate\\Cache\\RedisLock') ? 0 : 1);"}
)

// goAdapter builds the adapter of adapters/go named prog at the library version the
// module's go.mod names, as make go-adapters does.
func goAdapter(t *testing.T, prog string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), prog)
	build := exec.Command("go", "build", "-o", bin, "./"+prog)
	build.Dir, build.Env = "../../../adapters/go", append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in adapters/go: %v\n%s", err, out)
	}
	return bin
}

// The lock libraries people run, each behind its adapter, earn what their hellos
// document under every lock fault. Laravel's cache lock, a token under SET NX EX released
// by compare-and-delete, earns at least what the built-in token design documents.
// bsm/redislock (refreshed or not), rueidislock and Symfony Lock's RedisStore, whose
// holders ask their library before each write (its TTL, the lock's context,
// isAcquired()), have no built-in counterpart: they are judged by their hellos alone.
func TestLockLibraries(t *testing.T) {
	for _, c := range []struct {
		name, counterpart string
		need              []string
		command           func(t *testing.T) string
	}{
		{"redislock", "", nil, func(t *testing.T) string { return goAdapter(t, "redislock-lock") }},
		{"redislock-refresh", "", nil, func(t *testing.T) string { return goAdapter(t, "redislock-lock") + " --refresh" }},
		{"rueidislock", "", nil, func(t *testing.T) string { return goAdapter(t, "rueidislock-lock") }},
		{"symfony-lock", "", symfonyLock, func(*testing.T) string { return "php ../../../adapters/php/symfony-lock.php" }},
		{"laravel-lock", "token", laravel, func(*testing.T) string { return "php ../../../adapters/php/laravel-lock.php" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.need != nil {
				need(t, "PHP with phpredis and "+c.name+" (scripts/ensure-adapters.sh)", c.need...)
			}
			earns(t, Lock(Config{Name: c.name, Command: c.command(t), Procs: testProcs}, false), c.counterpart)
		})
	}
}

// Laravel's Redis queue earns what its hello documents under every queue fault, with
// either fulfil, and at least what stockbench's at-least-once documents; none
// of its keys outlive the sale.
func TestLaravelQueue(t *testing.T) {
	need(t, "PHP with phpredis and Laravel (php-laravel-framework)", laravel...)
	impl := Queue(Config{Name: "laravel-queue", Command: "php ../../../adapters/php/laravel-queue.php", Procs: testProcs})
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	admin := redistest.Shared(t).Client(1)
	defer admin.Close()
	for _, fulfil := range scenarios.Fulfils {
		want := queueimpl.AtLeastOnce.For(fulfil == scenarios.Idempotent)
		for _, k := range append([]faults.Kind{""}, faults.Kinds(faults.Queues)...) {
			var plan faults.Plan
			if k != "" {
				plan = faults.Plan{{Kind: k}}
			}
			t.Run(fmt.Sprintf("%s/%s", plan, fulfil), func(t *testing.T) {
				s := sale
				s.Faults, s.Fulfil, s.Prefix = plan, fulfil, fmt.Sprintf("{adapter:laravel:%s:%s}", plan, fulfil)
				run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
					return s.Run(ctx, red, impl)
				})
				if run.AsExpected == nil || !*run.AsExpected || run.Queue.Oversold > 0 {
					t.Errorf("the adapter documents %v, it earned %s (%s)", run.Expected, run.Verdict.Cell(), run.Verdict)
				}
				if classes, ok := want.For(plan); ok && k != faults.WorkerTerm && k != faults.StepTerm {
					for _, c := range classes {
						if !slices.Contains(run.Expected, c) {
							t.Errorf("at least once is %v; the adapter's hello, %v, leaves out %s", classes, run.Expected, c)
						}
					}
				}
				if keys, _ := admin.Keys(context.Background(), s.Prefix+"*").Result(); len(keys) > 0 {
					t.Errorf("Laravel's keys left behind: %v", keys)
				}
			})
		}
	}
	// Laravel's own worker loop (--worker): a job that comes back after a dead worker is
	// its second attempt, run (--tries 3); a worker stopped past its --timeout kills
	// itself as it wakes, before the job's work, and the sale goes on with a fresh one
	// (no lost order, the run complete, and the job another worker took once retry_after
	// passed done once: SAFE). At retry_after 5, as the analysis runs it.
	for _, k := range []faults.Kind{"", faults.WorkerCrash, faults.WorkerCrashLate, faults.WorkerPause, faults.WorkerTerm} {
		var plan faults.Plan
		if k != "" {
			plan = faults.Plan{{Kind: k}}
		}
		t.Run(fmt.Sprintf("worker/%s", plan), func(t *testing.T) {
			s := sale
			s.Visibility, s.Faults, s.Prefix = 5*time.Second, plan, fmt.Sprintf("{adapter:laravel-worker:%s}", plan)
			loop := Queue(Config{Name: "laravel-worker", Command: "php ../../../adapters/php/laravel-queue.php --worker", Procs: testProcs})
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, loop)
			})
			if !run.Complete || run.AsExpected == nil || !*run.AsExpected || run.Queue.Lost > 0 || run.Queue.Oversold > 0 {
				t.Errorf("want a complete run of a documented class, nothing lost: %s (%s), complete %v, %s", run.Verdict.Cell(), run.Verdict, run.Complete, run.Error)
			}
			if k == faults.WorkerPause && run.Verdict.Class != oracle.ClassSafe {
				t.Errorf("want SAFE: the paused worker dies as it wakes, past its --timeout; got %s (%s)", run.Verdict.Cell(), run.Verdict)
			}
		})
	}
	// At the sale's default visibility retry_after is 1 s, which Laravel counts from
	// the second of the pop, and a job may come back within milliseconds: the hello
	// admits DUPLICATED with no fault. At 2 s it never comes back within a second, and
	// a quick fulfil is never duplicated.
	t.Run("retry_after=2", func(t *testing.T) {
		s := sale
		s.Visibility, s.Prefix = 2*time.Second, "{adapter:laravel:retry2}"
		run := rigtest.On(t, h, rig.Need{Nodes: 1, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return s.Run(ctx, red, impl)
		})
		if run.Verdict.Class != oracle.ClassSafe {
			t.Errorf("want SAFE, got %s (%s)", run.Verdict.Cell(), run.Verdict)
		}
		judged(t, run, []oracle.Class{oracle.ClassSafe})
	})
}
