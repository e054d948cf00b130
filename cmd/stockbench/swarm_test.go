package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestSwarm runs make bench-swarm's script at a small size on a real orchestrator, a
// single-node Docker Swarm: four shard tasks of a replicated job per design against a
// Redis service on an overlay network, merged by a second job, beside the one-process
// run (lua SAFE, seed-setnx OVERSOLD, as in one process; a stream queue sale whose
// shards enqueue their share of the orders and run their share of the workers, SAFE). Then the lost shard: shard 2's
// container killed mid-sale, the merge incomplete with shard 2 lost and UNKNOWN, and the
// sale run again under the same run id merged complete. Nothing it made is left, the
// swarm included, and an engine already in a swarm stays in it.
func TestSwarm(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no Docker engine: the shards are swarm tasks")
	}
	before := swarmState(t)
	out := t.TempDir()
	run := func(env ...string) string {
		cmd := exec.Command("../../scripts/bench-swarm.sh")
		cmd.Env = append(os.Environ(), append([]string{"SHARDS=4", "OUT=" + out}, env...)...)
		b, err := cmd.CombinedOutput()
		t.Logf("%s", b)
		if err != nil {
			t.Fatalf("bench-swarm %v: %v", env, err)
		}
		return string(b)
	}
	merged := func(glob string) results.Run {
		t.Helper()
		matches, _ := filepath.Glob(filepath.Join(out, "merged", glob, "*-merged", "results.json"))
		if len(matches) != 1 {
			t.Fatalf("want one merged run in %s, got %v", glob, matches)
		}
		f, err := results.Read(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		return f.Runs[0]
	}

	run("RUN_ID=sale", "BUYERS=400", "STOCK=40", "LOCKS=lua,seed-setnx", "QUEUES=stream")
	for design, want := range map[string]oracle.Class{"lua": oracle.ClassSafe, "seed-setnx": oracle.ClassOversold, "stream": oracle.ClassSafe} {
		r := merged("sb-*-" + design + "-sale")
		if r.Verdict.Class != want || r.Shard == nil || r.Shard.Count != 4 || r.Oracle.Buyers != 400 || !r.Complete {
			t.Errorf("%s merged: %s over %d buyers (%+v, complete %v), want %s over 400 from 4 shards", design, r.Verdict, r.Oracle.Buyers, r.Shard, r.Complete, want)
		}
		if design == "stream" && (r.Queue == nil || r.Queue.Accepted != 400 || r.Queue.Fulfilled != 40 || r.Queue.Refused != 360) {
			t.Errorf("stream merged: %+v; want all 400 orders accepted, 40 fulfilled and 360 refused across the shards", r.Queue)
		}
	}

	says := run("RUN_ID=lost", "BUYERS=2000", "STOCK=1500", "RATE=200", "LOCKS=lua", "QUEUES=", "KILL_SHARD=2")
	lost := merged("sb-*-lua-lost")
	if lost.Complete || lost.Shard == nil || !slices.Equal(lost.Shard.Lost, []int{2}) || lost.Verdict.Class != oracle.ClassUnknown || lost.Oracle.Pending != 500 {
		t.Errorf("lost shard: complete %v, %+v, %s, %d pending; want incomplete, shard 2 lost, UNKNOWN, 500 pending", lost.Complete, lost.Shard, lost.Verdict, lost.Oracle.Pending)
	}
	if rerun := merged("sb-*-lua-rerun"); !rerun.Complete || rerun.Verdict.Class != oracle.ClassSafe || rerun.Shard.Attempt == lost.Shard.Attempt {
		t.Errorf("rerun under the same run id: complete %v, %s, attempt %d (the lost one's %d); want a complete SAFE record of a new attempt",
			rerun.Complete, rerun.Verdict, rerun.Shard.Attempt, lost.Shard.Attempt)
	}
	if !strings.Contains(says, "shard 2 of 4 lost") {
		t.Error("the script did not say which shard was lost")
	}

	left, _ := exec.Command("docker", "ps", "-aq", "--filter", "name=^sb-").Output()
	nets, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "name=stockbench-sb-").Output()
	if s := strings.TrimSpace(string(left) + string(nets)); s != "" {
		t.Errorf("containers or networks left behind: %s", s)
	}
	if after := swarmState(t); after != before {
		t.Errorf("the engine's swarm was %s before and is %s after", before, after)
	}
}

func swarmState(t *testing.T) string {
	t.Helper()
	b, err := exec.Command("docker", "info", "--format", "{{.Swarm.LocalNodeState}}").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
