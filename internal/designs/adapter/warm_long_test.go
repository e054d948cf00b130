//go:build long

package adapter

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// TestWarmQueueProcesses: the queue adapters of RQ (both ways), Sidekiq, Celery and Laravel serve sale after sale.
// The next sale's pool says hello again to the processes the last one kept, each then
// starting a worker of its own; the same seeds earn the same classes from kept
// processes as from fresh ones, under no fault and under worker-crash, whose class no
// race decides for either (both lose exactly a killed worker's job); no key outlives a
// sale; once drained, no process is left.
func TestWarmQueueProcesses(t *testing.T) {
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	admin := redistest.Shared(t).Client(1)
	defer admin.Close()
	for _, c := range []struct {
		name, command string
		need          []string
		fault         faults.Kind   // one whose class is the same in every draw
		visibility    time.Duration // the sale's, when not its default
	}{
		{"rq", "/usr/bin/python3 ../../../adapters/python/rq_queue.py", rqLib, faults.WorkerCrash, 0},
		// RQ's own loop, stopped at bye by its warm shutdown.
		{"rq-loop", "/usr/bin/python3 ../../../adapters/python/rq_queue.py --worker-loop", rqLib, faults.WorkerCrash, 0},
		{"sidekiq", "ruby ../../../adapters/ruby/bin/stockbench-sidekiq-queue", sidekiqLib, faults.WorkerCrash, 0},
		// Celery's worker-crash is a race (a fresh worker's restore may come past the
		// visibility timeout); an evicted job is lost by every draw.
		{"celery", "/usr/bin/python3 ../../../adapters/python/celery_queue.py", celeryLib, faults.EvictJob, 0},
		// Laravel's retry_after at 1 s gives a job back within the second it was
		// popped in, a race with no fault (docs/analyses/reports/laravel-queue-1.md);
		// at 2 s no job of this sale outlives its reservation.
		{"laravel", "php ../../../adapters/php/laravel-queue.php", laravel, faults.WorkerCrash, 2 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			need(t, c.name, c.need...)
			cfg := Config{Name: "warm-" + c.name, Command: c.command, Procs: 4}
			impl := Queue(cfg)
			key := warmKey(cfg.Name, strings.Fields(c.command), DefaultPatience)
			run := func(k faults.Kind, seed uint64) results.Run {
				t.Helper()
				s := sale
				s.Seed, s.Conns = seed, cfg.Procs
				if c.visibility > 0 {
					s.Visibility = c.visibility
				}
				if k != "" {
					s.Faults = faults.Plan{{Kind: k}}
				}
				s.Prefix = fmt.Sprintf("{adapter:warm:%s:%s:%d}", c.name, k, seed)
				r := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
					return s.Run(ctx, red, impl)
				})
				if keys, _ := admin.Keys(context.Background(), s.Prefix+"*").Result(); len(keys) > 0 {
					t.Errorf("%s seed %d: keys left behind: %v", k, seed, keys)
				}
				return r
			}
			servesSaleAfterSale(t, key, cfg.Procs, strings.Fields(c.command)[1], []faults.Kind{"", c.fault}, run)
		})
	}
}

// TestWarmPHPLockProcesses: Symfony's and Laravel's lock adapters serve sale after
// sale. The next sale's pool says hello again to the processes the last one kept; the
// same seeds earn the same classes from kept processes as from fresh ones under no
// fault and under crash-holder (SAFE for a token lock, no race deciding it); once
// drained, no process is left.
func TestWarmPHPLockProcesses(t *testing.T) {
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, script string
		need         []string
	}{
		{"symfony", "../../../adapters/php/symfony-lock.php", symfonyLock},
		{"laravel", "../../../adapters/php/laravel-lock.php", laravel},
	} {
		t.Run(c.name, func(t *testing.T) {
			need(t, c.name, c.need...)
			cfg := Config{Name: "warm-" + c.name, Command: "php " + c.script, Procs: 4}
			impl := Lock(cfg, false)
			key := warmKey(cfg.Name, []string{"php", c.script}, DefaultPatience)
			run := func(k faults.Kind, seed uint64) results.Run {
				t.Helper()
				return runWith(t, h, sale, impl, k, seed)
			}
			servesSaleAfterSale(t, key, cfg.Procs, c.script, []faults.Kind{"", faults.CrashHolder}, run)
		})
	}
}

// servesSaleAfterSale checks an adapter kept warm under key, from a drained cache: a
// sale of procs processes earns SAFE and leaves them all kept; the next sale is served
// by the same ones and earns SAFE; the same seeds earn the same classes kept or fresh
// under kinds (sameWarmOrFresh); and once drained, no process of script is left.
func servesSaleAfterSale(t *testing.T, key string, procs int, script string, kinds []faults.Kind, run func(faults.Kind, uint64) results.Run) {
	t.Helper()
	t.Cleanup(Drain)
	Drain()
	first := run("", 1)
	kept := keptPids(key)
	if len(kept) != procs || first.Verdict.Class != "SAFE" {
		t.Fatalf("after a sale of %d processes: %d kept (%v), %s (%s)", procs, len(kept), kept, first.Verdict.Cell(), first.Verdict)
	}
	if again := run("", 2); again.Verdict.Class != "SAFE" || !slices.Equal(keptPids(key), kept) {
		t.Errorf("the next sale: want the same %d processes served it and kept, got %v; %s (%s)", procs, keptPids(key), again.Verdict.Cell(), again.Verdict)
	}
	sameWarmOrFresh(t, kinds, run)
	Drain()
	if left := leftBehind(reaped, script); len(left) > 0 {
		t.Errorf("processes left behind once drained: %v", left)
	}
}
