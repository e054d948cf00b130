package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
	"github.com/stockbench/stockbench/scenarios"
)

// shardOf reads --shard, or else a Kubernetes Indexed Job's JOB_COMPLETION_INDEX or a
// swarm job's STOCKBENCH_SHARD_SLOT with STOCKBENCH_SHARDS (the job's completions); the
// zero Shard when none says.
func shardOf(flag string) (scenarios.Shard, error) {
	if flag != "" {
		return scenarios.ParseShard(flag)
	}
	index, count := os.Getenv("JOB_COMPLETION_INDEX"), os.Getenv("STOCKBENCH_SHARDS")
	from := "JOB_COMPLETION_INDEX"
	if slot := os.Getenv("STOCKBENCH_SHARD_SLOT"); index == "" && slot != "" {
		n, _ := strconv.Atoi(count)
		index, from = strconv.Itoa(shardSlot(slot, n)), "STOCKBENCH_SHARD_SLOT"
	}
	if index == "" || count == "" {
		return scenarios.Shard{}, nil
	}
	s, err := scenarios.ParseShard(index + "/" + count)
	if err != nil {
		return s, fmt.Errorf("from %s and STOCKBENCH_SHARDS=%s: %w", from, count, err)
	}
	return s, nil
}

// shardSlot reads a swarm replicated job's {{.Task.Slot}}, as deploy/swarm/stack.yml
// passes it: the engine numbers a job's slots from 0 and writes slot 0 as the node's id,
// so a slot that is no number is 0; taken modulo the count, so that slots numbered
// from 1, as a service's are, serve too.
func shardSlot(slot string, count int) int {
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 || count < 1 {
		return 0
	}
	return n % count
}

// shardWaitOf is --shard-wait, or STOCKBENCH_SHARD_WAIT when the flag is not given.
func shardWaitOf(fs *flag.FlagSet, v time.Duration) (time.Duration, error) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "shard-wait" })
	if env := os.Getenv("STOCKBENCH_SHARD_WAIT"); env != "" && !given {
		d, err := time.ParseDuration(env)
		if err != nil {
			return 0, fmt.Errorf("STOCKBENCH_SHARD_WAIT=%s: a duration, as 30s or 2m", env)
		}
		v = d
	}
	if v <= 0 || v > time.Hour {
		return 0, fmt.Errorf("--shard-wait must be more than 0 and at most 1h, got %s", v)
	}
	return v, nil
}

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

// mergeCommand is `stockbench merge DIR...`: the shards' partial records of one sale
// joined into the sale's record, judged on the union and reported as any run is.
func mergeCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("merge", "merge [--out DIR] SHARD_DIR... (or the run's directory, which holds them all)")
	out := fset.String("out", "results/runs", "directory that receives the merged run directory")
	var c common
	c.bindPolicy(fset)
	plots := plotsFlag(fset, string(report.DefaultPlots))
	dirs, help, err := parseWithArgs(fset, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if len(dirs) == 0 {
		return bench.Complain(stderr, bench.UsageError(errors.New("merge: name the shards' directories, or the run directory that holds them")))
	}
	if err := bench.Writable(*out); err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	var parts []results.Part
	for _, d := range shardDirs(dirs) {
		p, err := results.ReadPart(d)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("merge: %w", err)))
		}
		parts = append(parts, p)
	}
	run, err := scenarios.Merge(parts)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	first := parts[0]
	file := bench.NewFile(append([]string{"merge"}, args...), first.ID+"-merged", results.Target{})
	file.StartedAt, file.FinishedAt = run.Started.UTC(), run.Started.Add(run.Duration).UTC()
	file.Complete, file.Incomplete, file.Runs = run.Complete, run.Error, []results.Run{run}
	file.Plots = string(*plots)
	if f, err := results.Read(filepath.Join(first.Run.Source, "results.json")); err == nil {
		file.Target, file.Host = f.Target, f.Host // the load generator's host, not the merge's
	}
	o := results.NewOutput(*out, file.ID)
	if _, err := os.Stat(o.Dir); err == nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("merge: %s exists already", o.Dir)))
	}
	if err := o.Progress(file); err != nil {
		return bench.Complain(stderr, err)
	}
	fmt.Fprintf(stdout, "merged %d shards of run %s\n\n", len(parts), first.ID)
	report.WriteReport(stdout, file.Runs, columns)
	fmt.Fprintf(stdout, "\nresults: %s\n", o.Dir)
	code := bench.WriteReport(ctx, o, file, bench.ExitOK, stderr)
	if !run.Complete {
		fmt.Fprintln(stderr, "stockbench: incomplete:", run.Error)
	}
	lines, judged := bench.Judge(c.policy)(file)
	fmt.Fprintln(stdout)
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	return bench.Worst(code, judged)
}

// shardDirs expands each directory that holds no results.json but shards' directories
// into those (Merge puts them in order).
func shardDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		matches, _ := filepath.Glob(filepath.Join(d, "shard-*-of-*"))
		if _, err := os.Stat(filepath.Join(d, "results.json")); err == nil || len(matches) == 0 {
			matches = []string{d} // a shard's own, or ReadPart says what is wrong with it
		}
		out = append(out, matches...)
	}
	return out
}
