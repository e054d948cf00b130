package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestDistributed runs make bench-distributed's script at a small size: four shard
// containers of the stockbench image per design on a private network against a Redis
// container, merged, beside the one-process run. The merged verdicts are the one-process
// ones (lua SAFE, seed-setnx OVERSOLD), the witness sees seed-setnx's holders on
// different shards overlap, and no container or network is left.
func TestDistributed(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no Docker engine: the shards are containers")
	}
	out := t.TempDir()
	cmd := exec.Command("../../scripts/bench-distributed.sh")
	cmd.Env = append(os.Environ(), "SHARDS=4", "BUYERS=400", "STOCK=40", "LOCKS=lua,seed-setnx", "FLAGS=--think 1ms", "OUT="+out)
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("bench-distributed: %v", err)
	}
	for lock, want := range map[string]oracle.Class{"lua": oracle.ClassSafe, "seed-setnx": oracle.ClassOversold} {
		matches, _ := filepath.Glob(filepath.Join(out, "merged", "*-"+lock+"-merged", "results.json"))
		if len(matches) != 1 {
			t.Fatalf("%s: want one merged run, got %v", lock, matches)
		}
		f, err := results.Read(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		run := f.Runs[0]
		if run.Verdict.Class != want || run.Shard == nil || run.Shard.Count != 4 || run.Oracle.Buyers != 400 {
			t.Errorf("%s merged: %s over %d buyers (%+v), want %s over 400 from 4 shards", lock, run.Verdict, run.Oracle.Buyers, run.Shard, want)
		}
		if w := run.Oracle.Witness; lock == "seed-setnx" && (w == nil || w.Max < 2 || run.Oracle.Overlaps == 0) {
			t.Errorf("seed-setnx: the witness missed the overlaps across shards: %+v", w)
		}
	}
	left, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "name=stockbench-dist-").Output()
	if s := strings.TrimSpace(string(left)); s != "" {
		t.Errorf("networks left behind: %s", s)
	}
}
