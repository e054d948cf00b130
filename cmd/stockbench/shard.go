package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

var shardRunID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// shardJob makes the one job of run a shard: a flash sale through a lock design, on the
// user's Redis, which every shard must share, under the run's name.
func (c *common) shardJob(jobs []bench.Job, args []string) error {
	if !c.external() {
		return bench.UsageError(errors.New("run: --shard needs --redis-url: every shard must reach the same Redis"))
	}
	// An orchestrator starts the shards beside their Redis: each may wait for it to
	// answer as long as it waits for the others.
	c.redis.Patience = c.shard.Join
	var validate func() error
	var sale string
	switch j := jobs[0].(type) {
	case bench.LockJob:
		if c.redis.Cluster && j.Impl.LockNodes() > 1 {
			return bench.UsageError(fmt.Errorf("run: --shard: %s needs %d lock servers; a sharded sale has one Redis", j.Impl.Name, j.Impl.LockNodes()))
		}
		sale = fmt.Sprintf("%s|%+v", j.Impl.Name, j.Sale) // before the shard: the same in every shard
		j.Sale.Shard = c.shard
		validate, jobs[0] = j.Sale.Validate, j
	case bench.QueueJob:
		sale = fmt.Sprintf("%s|%+v", j.Impl.Name, j.Sale)
		j.Sale.Shard = c.shard
		validate, jobs[0] = j.Sale.Validate, j
	default:
		return bench.UsageError(fmt.Errorf("run: --shard shards a flash sale or a queue sale, not %T", j))
	}
	if c.runID == "" {
		// Every shard is given the same flags, so the same sale names the same run.
		sum := sha256.Sum256([]byte(sale))
		c.runID = "sale-" + hex.EncodeToString(sum[:6])
	}
	if !shardRunID.MatchString(c.runID) {
		return bench.UsageError(fmt.Errorf("run: --run-id must be 1 to 64 letters, digits, '.', '_' or '-', got %q", c.runID))
	}
	if err := validate(); err != nil {
		return bench.UsageError(fmt.Errorf("run: %w", err))
	}
	// A shard's directory from an earlier attempt of the same command is replaced once
	// this attempt has run (a rerun under the same run id); one of another sale is not.
	if f, err := results.Read(filepath.Join(c.shardDir(), "results.json")); err == nil && !slices.Equal(f.Args, redact.Strings(args)) {
		return bench.UsageError(fmt.Errorf("run: %s holds shard %s of run %s from another command (%s): give this run its own --run-id",
			c.shardDir(), c.shard, c.runID, strings.Join(f.Args, " ")))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return bench.UsageError(fmt.Errorf("run: %s holds no readable record (%w): give this run its own --run-id, or remove it", c.shardDir(), err))
	}
	return nil
}

// shardDir is where the shard's partial record goes: one directory per run, one
// subdirectory per shard, which stockbench merge reads whole.
func (c *common) shardDir() string {
	return filepath.Join(c.out, c.runID, fmt.Sprintf("shard-%d-of-%d", c.shard.Index, c.shard.Count))
}

// runShard is `stockbench run --shard i/n`: this process's share of the sale, met with
// the other shards in Redis, written as a partial record for stockbench merge.
func (c *common) runShard(ctx context.Context, j bench.Job, args []string, stdout, stderr io.Writer) int {
	return bench.RunShard(ctx, c.options(args, nil), j, c.runID, c.shardDir(), stdout, stderr)
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
