package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/results"
)

// TestShardSlot: a swarm job's slots count from 0 and the engine writes slot 0 as the
// node's id; a service's count from 1. Either way every shard gets one index.
func TestShardSlot(t *testing.T) {
	for _, tc := range []struct {
		slot  string
		count int
		want  int
	}{
		{"yhfl9egtk5kffap4gn7y6qcow", 4, 0}, {"1", 4, 1}, {"3", 4, 3}, {"4", 4, 0}, {"0", 4, 0}, {"-1", 4, 0}, {"2", 0, 0},
	} {
		if got := bench.ShardSlot(tc.slot, tc.count); got != tc.want {
			t.Errorf("shardSlot(%q, %d) = %d, want %d", tc.slot, tc.count, got, tc.want)
		}
	}
}

// TestShardRerun runs a sale as two shard processes on one Redis and merges it; runs it
// again under the same run id, whose records replace the first attempt's; refuses a
// shard of another sale under that id; and lets a shard alone at the barrier give up
// after --shard-wait with one line.
func TestShardRerun(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	url := "redis://" + redistest.Start(t).Info.Addr
	out := t.TempDir()
	sale := []string{"run", "--lock", "lua", "--buyers", "40", "--stock", "10", "--run-id", "r1", "--redis-url", url, "--out", out}
	shards := func() int64 {
		t.Helper()
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				if code, _, stderr := stockbench(t, append(sale, "--shard", []string{"0/2", "1/2"}[i])...); code != 0 {
					t.Errorf("shard %d/2: exit %d:\n%s", i, code, stderr)
				}
			})
		}
		wg.Wait()
		merged := t.TempDir()
		if code, _, stderr := stockbench(t, "merge", filepath.Join(out, "r1"), "--out", merged); code != 0 {
			t.Fatalf("merge: exit %d:\n%s", code, stderr)
		}
		f := readRun(t, merged, "results.json")
		if r := f.Runs[0]; !r.Complete || r.Verdict.Class != "SAFE" || r.Shard.Count != 2 {
			t.Fatalf("merged: complete %v, %s, %+v", r.Complete, r.Verdict, r.Shard)
		}
		// The merged sale is held to the exit rule as any: SAFE is not what --expect names.
		if code, stdout, _ := stockbench(t, "merge", filepath.Join(out, "r1"), "--out", t.TempDir(), "--expect", "OVERSOLD"); code != bench.ExitFailed ||
			!strings.Contains(stdout, "not what --expect names") {
			t.Errorf("merge --expect OVERSOLD of a SAFE sale: exit %d, want 1:\n%s", code, stdout)
		}
		return f.Runs[0].Shard.Attempt
	}
	first := shards()
	second := shards()
	if first == 0 || second == first {
		t.Errorf("attempts %d then %d: want the rerun's records, a new attempt, to replace the first's", first, second)
	}
	for i := range 2 {
		f, err := results.Read(filepath.Join(out, "r1", []string{"shard-0-of-2", "shard-1-of-2"}[i], "results.json"))
		if err != nil || f.Runs[0].Shard.Attempt != second {
			t.Errorf("shard %d's record: %v, attempt %v; want the rerun's, %d", i, err, f.Runs[0].Shard.Attempt, second)
		}
	}

	code, _, stderr := stockbench(t, "run", "--lock", "lua", "--buyers", "50", "--stock", "10", "--run-id", "r1", "--redis-url", url, "--out", out, "--shard", "0/2")
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != bench.ExitUsage || len(lines) != 1 || !strings.Contains(stderr, "from another command") {
		t.Errorf("a shard of another sale under r1: exit %d, want %d and one line:\n%s", code, bench.ExitUsage, stderr)
	}

	began := time.Now()
	cmd := exec.Command(binary, "run", "--lock", "lua", "--buyers", "40", "--run-id", "alone", "--redis-url", url, "--out", out, "--shard", "1/2", "--shard-wait", "1s")
	b, _ := cmd.CombinedOutput()
	took := time.Since(began)
	if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(b), "only 1 of 2 shards arrived within 1s") || took > 10*time.Second {
		t.Errorf("a shard alone with --shard-wait 1s: exit %d after %s:\n%s", cmd.ProcessState.ExitCode(), took.Round(time.Millisecond), b)
	}
}
