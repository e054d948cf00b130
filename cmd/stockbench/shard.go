package main

import (
	"context"
	"errors"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/results/report"
)

// shardJob makes the one job of run a shard (bench.ShardJob), on the user's Redis,
// which every shard must share, under the run's name.
func (c *common) shardJob(jobs []bench.Job, args []string) (err error) {
	if !c.external() {
		return bench.UsageError(errors.New("run: --shard needs --redis-url: every shard must reach the same Redis"))
	}
	// An orchestrator starts the shards beside their Redis: each may wait for it to
	// answer as long as it waits for the others.
	c.redis.Patience = c.shard.Join
	jobs[0], c.runID, err = bench.ShardJob(jobs[0], c.shard, c.runID, c.out, c.redis.Cluster, args)
	return err
}

// runShard is `stockbench run --shard i/n`: this process's share of the sale, met with
// the other shards in Redis, written as a partial record for stockbench merge.
func (c *common) runShard(ctx context.Context, j bench.Job, args []string, stdout, stderr io.Writer) int {
	return bench.RunShard(ctx, c.options(args, nil), j, c.runID, bench.ShardDir(c.out, c.runID, c.shard), stdout, stderr)
}

// mergeCommand is `stockbench merge DIR...`: bench.Merge.
func mergeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("merge", "merge [--out DIR] SHARD_DIR... (or the run's directory, which holds them all)")
	m := bench.MergeConfig{Args: append([]string{"merge"}, args...), Width: columns}
	fset.StringVar(&m.Out, "out", "results/runs", "directory that receives the merged run directory")
	var c common
	c.bindPolicy(fset)
	plots := plotsFlag(fset, string(report.DefaultPlots))
	dirs, help, err := parseWithArgs(fset, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	m.Dirs, m.Plots, m.Policy = dirs, string(*plots), c.policy
	return bench.Merge(ctx, m, stdout, stderr)
}
