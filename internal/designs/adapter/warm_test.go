package adapter

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// keptPids are the pids of the processes kept warm under key, sorted.
func keptPids(key string) []int {
	warm.mu.Lock()
	defer warm.mu.Unlock()
	var pids []int
	for _, wp := range warm.idle[key] {
		pids = append(pids, wp.pr.cmd.Process.Pid)
	}
	slices.Sort(pids)
	return pids
}

// TestWarmProcessesServeTheNextSale: an adapter of protocol 3 is kept between sales.
// The next sale's pool says hello again to the same processes rather than starting
// its own; a process a fault struck (crash-holder's SIGKILL) is not kept, its successor
// is; the same
// seeds earn the same classes from kept processes as from fresh ones (none and
// crash-holder, whose classes no race decides for a token lock: SAFE); and once
// drained, no process is left.
func TestWarmProcessesServeTheNextSale(t *testing.T) {
	need(t, "python3-redis", python...)
	script, _ := filepath.Abs("testdata/warmlock.py")
	cfg := Config{Name: "warmlock", Command: "/usr/bin/python3 " + script, Procs: 4}
	impl := Lock(cfg, false)
	key := warmKey(cfg.Name, []string{"/usr/bin/python3", script}, DefaultPatience)
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	run := func(k faults.Kind, seed uint64) results.Run {
		t.Helper()
		return runWith(t, h, sale, impl, k, seed)
	}
	t.Cleanup(Drain)

	Drain()
	first := run("", 1)
	kept := keptPids(key)
	if len(kept) != cfg.Procs || !first.Complete {
		t.Fatalf("after a sale of %d processes: %d kept (%v), sale complete %v", cfg.Procs, len(kept), kept, first.Complete)
	}
	if again := run("", 2); !again.Complete || !slices.Equal(keptPids(key), kept) {
		t.Errorf("the next sale: want the same %d processes served it and kept, got %v (complete %v)", cfg.Procs, keptPids(key), again.Complete)
	}
	// The holder crash-holder kills is replaced by a fresh process, as a supervisor
	// starts one, even with kept ones idle (a sale of six left two spare): the successor
	// is kept, the killed one is not.
	six := cfg
	six.Procs = 6
	if r := runWith(t, h, sale, Lock(six, false), "", 4); !r.Complete {
		t.Fatalf("a sale of 6 processes did not finish: %s", r.Verdict)
	}
	spare := keptPids(key)
	crashed := run(faults.CrashHolder, 3)
	after := keptPids(key)
	gone := slices.DeleteFunc(slices.Clone(spare), func(pid int) bool { return slices.Contains(after, pid) })
	fresh := slices.DeleteFunc(slices.Clone(after), func(pid int) bool { return slices.Contains(spare, pid) })
	if len(spare) != six.Procs || len(after) != six.Procs || len(gone) != 1 || len(fresh) != 1 || crashed.Verdict.Class != "SAFE" {
		t.Errorf("under crash-holder: kept %v, before it %v: want one gone and a fresh successor kept in its place; class %s", after, spare, crashed.Verdict.Class)
	}

	sameWarmOrFresh(t, []faults.Kind{"", faults.CrashHolder}, run)
	Drain()
	if left := leftBehind(reaped, script); len(left) > 0 {
		t.Errorf("processes left behind once drained: %v", left)
	}
}

// runWith runs sale on impl under kind k (none when empty) with seed, on a server of
// its own.
func runWith(t *testing.T, h *rig.Harness, sale scenarios.FlashSale, impl lockimpl.Impl, k faults.Kind, seed uint64) results.Run {
	t.Helper()
	s := sale
	s.Seed = seed
	if k != "" {
		s.Faults = faults.Plan{{Kind: k}}
	}
	s.Prefix = fmt.Sprintf("{adapter:warm:%s:%d}", k, seed)
	return rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
		return s.Run(ctx, red, impl)
	})
}

// sameWarmOrFresh runs seeds 10 and 11 under each kind twice, first from the processes
// kept warm and then, drained, from fresh ones, and checks that both earned one class.
func sameWarmOrFresh(t *testing.T, kinds []faults.Kind, run func(faults.Kind, uint64) results.Run) {
	t.Helper()
	for _, k := range kinds {
		for seed := uint64(10); seed < 12; seed++ {
			warmRun := run(k, seed)
			Drain()
			fresh := run(k, seed)
			if warmRun.Verdict.Class != fresh.Verdict.Class {
				t.Errorf("%q seed %d: kept processes earned %s, fresh ones %s", k, seed, warmRun.Verdict.Cell(), fresh.Verdict.Cell())
			}
		}
	}
}

// TestAdapterEnvGivesGoOneP: an adapter process starts with the command's environment
// and, unless the user set GOMAXPROCS, GOMAXPROCS=1 (a Go adapter serves one request at
// a time; a P per CPU in each of a sale's dozens of processes cost the analyses half
// their CPU); a user's own GOMAXPROCS is kept as it is.
func TestAdapterEnvGivesGoOneP(t *testing.T) {
	procs := func() []string {
		var got []string
		for _, kv := range adapterEnv() {
			if strings.HasPrefix(kv, "GOMAXPROCS=") {
				got = append(got, kv)
			}
		}
		return got
	}
	t.Setenv("STOCKBENCH_ADAPTER_ENV_PROBE", "kept")
	t.Setenv("GOMAXPROCS", "3")
	if got := procs(); !slices.Equal(got, []string{"GOMAXPROCS=3"}) {
		t.Errorf("a user's GOMAXPROCS=3: the adapter got %v", got)
	}
	os.Unsetenv("GOMAXPROCS") // t.Setenv restores it at the end
	if got := procs(); !slices.Equal(got, []string{"GOMAXPROCS=1"}) {
		t.Errorf("no GOMAXPROCS set: the adapter got %v, want GOMAXPROCS=1", got)
	}
	if !slices.Contains(adapterEnv(), "STOCKBENCH_ADAPTER_ENV_PROBE=kept") {
		t.Error("the command's own environment is not passed on")
	}
}
