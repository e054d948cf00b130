package bench

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
	"strconv"
	"strings"
	"time"

	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
	"github.com/stockbench/stockbench/scenarios"
)

// ShardOf reads --shard, or else a Kubernetes Indexed Job's JOB_COMPLETION_INDEX or a
// swarm job's STOCKBENCH_SHARD_SLOT with STOCKBENCH_SHARDS (the job's completions); the
// zero Shard when none says.
func ShardOf(flag string) (scenarios.Shard, error) {
	if flag != "" {
		return scenarios.ParseShard(flag)
	}
	index, count := os.Getenv("JOB_COMPLETION_INDEX"), os.Getenv("STOCKBENCH_SHARDS")
	from := "JOB_COMPLETION_INDEX"
	if slot := os.Getenv("STOCKBENCH_SHARD_SLOT"); index == "" && slot != "" {
		n, _ := strconv.Atoi(count)
		index, from = strconv.Itoa(ShardSlot(slot, n)), "STOCKBENCH_SHARD_SLOT"
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

// ShardSlot reads a swarm replicated job's {{.Task.Slot}}, as deploy/swarm/stack.yml
// passes it: the engine numbers a job's slots from 0 and writes slot 0 as the node's id,
// so a slot that is no number is 0; taken modulo the count, so that slots numbered
// from 1, as a service's are, serve too.
func ShardSlot(slot string, count int) int {
	n, err := strconv.Atoi(slot)
	if err != nil || n < 0 || count < 1 {
		return 0
	}
	return n % count
}

// ShardWait is --shard-wait's value v, or STOCKBENCH_SHARD_WAIT when the flag was not
// given, checked.
func ShardWait(v time.Duration, given bool) (time.Duration, error) {
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

// ShardJob makes job shard of a sharded run: a flash sale or a queue sale, on one Redis
// (cluster: a Redis Cluster), under the run's name runID, or, when it is empty, a name
// made from the sale (every shard is given the same flags, so the same sale names the
// same run). It returns the shard's job and the run's name. The shard's directory under
// out, when an earlier attempt left it, must hold a record of the same command line
// args (a rerun under the same run id), not another sale's.
func ShardJob(job Job, shard scenarios.Shard, runID, out string, cluster bool, args []string) (Job, string, error) {
	var validate func() error
	var sale string
	switch j := job.(type) {
	case LockJob:
		if cluster && j.Impl.LockNodes() > 1 {
			return nil, "", UsageError(fmt.Errorf("run: --shard: %s needs %d lock servers; a sharded sale has one Redis", j.Impl.Name, j.Impl.LockNodes()))
		}
		sale = fmt.Sprintf("%s|%+v", j.Impl.Name, j.Sale) // before the shard: the same in every shard
		j.Sale.Shard = shard
		validate, job = j.Sale.Validate, j
	case QueueJob:
		sale = fmt.Sprintf("%s|%+v", j.Impl.Name, j.Sale)
		j.Sale.Shard = shard
		validate, job = j.Sale.Validate, j
	default:
		return nil, "", UsageError(fmt.Errorf("run: --shard shards a flash sale or a queue sale, not %T", j))
	}
	if runID == "" {
		sum := sha256.Sum256([]byte(sale))
		runID = "sale-" + hex.EncodeToString(sum[:6])
	}
	if !shardRunID.MatchString(runID) {
		return nil, "", UsageError(fmt.Errorf("run: --run-id must be 1 to 64 letters, digits, '.', '_' or '-', got %q", runID))
	}
	if err := validate(); err != nil {
		return nil, "", UsageError(fmt.Errorf("run: %w", err))
	}
	// A shard's directory from an earlier attempt of the same command is replaced once
	// this attempt has run (a rerun under the same run id); one of another sale is not.
	dir := ShardDir(out, runID, shard)
	if f, err := results.Read(filepath.Join(dir, "results.json")); err == nil && !slices.Equal(f.Args, redact.Strings(args)) {
		return nil, "", UsageError(fmt.Errorf("run: %s holds shard %s of run %s from another command (%s): give this run its own --run-id",
			dir, shard, runID, strings.Join(f.Args, " ")))
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, "", UsageError(fmt.Errorf("run: %s holds no readable record (%w): give this run its own --run-id, or remove it", dir, err))
	}
	return job, runID, nil
}

// ShardDir is where a shard's partial record goes: one directory per run under out, one
// subdirectory per shard, which stockbench merge reads whole.
func ShardDir(out, runID string, shard scenarios.Shard) string {
	return filepath.Join(out, runID, fmt.Sprintf("shard-%d-of-%d", shard.Index, shard.Count))
}

// MergeConfig is a merge of a sharded sale's partial records.
type MergeConfig struct {
	// Dirs are the shards' directories, or the run's, which holds them all.
	Dirs []string
	// Out receives the merged run directory; Plots is which plot files its report
	// writes; Args is the command line its record keeps.
	Out, Plots string
	Args       []string
	// Policy fails the merged sale over what its design documents.
	Policy results.Policy
	// Width is the terminal's, for the tables printed (0: any).
	Width int
}

// Merge joins the shards' partial records of one sale into the sale's record, judged on
// the union and reported as any run is, and returns the exit code (ExitRule).
func Merge(ctx context.Context, m MergeConfig, stdout, stderr io.Writer) int {
	if len(m.Dirs) == 0 {
		return Complain(stderr, UsageError(errors.New("merge: name the shards' directories, or the run directory that holds them")))
	}
	if err := Writable(m.Out); err != nil {
		return Complain(stderr, UsageError(err))
	}
	var parts []results.Part
	for _, d := range shardDirs(m.Dirs) {
		p, err := results.ReadPart(d)
		if err != nil {
			return Complain(stderr, UsageError(fmt.Errorf("merge: %w", err)))
		}
		parts = append(parts, p)
	}
	run, err := scenarios.Merge(parts)
	if err != nil {
		return Complain(stderr, UsageError(err))
	}
	first := parts[0]
	file := NewFile(m.Args, first.ID+"-merged", results.Target{})
	file.StartedAt, file.FinishedAt = run.Started.UTC(), run.Started.Add(run.Duration).UTC()
	file.Complete, file.Incomplete, file.Runs = run.Complete, run.Error, []results.Run{run}
	file.Plots = m.Plots
	if f, err := results.Read(filepath.Join(first.Run.Source, "results.json")); err == nil {
		file.Target, file.Host = f.Target, f.Host // the load generator's host, not the merge's
	}
	o := results.NewOutput(m.Out, file.ID)
	if _, err := os.Stat(o.Dir); err == nil {
		return Complain(stderr, UsageError(fmt.Errorf("merge: %s exists already", o.Dir)))
	}
	if err := o.Progress(file); err != nil {
		return Complain(stderr, err)
	}
	fmt.Fprintf(stdout, "merged %d shards of run %s\n\n", len(parts), first.ID)
	report.WriteReport(stdout, file.Runs, m.Width)
	fmt.Fprintf(stdout, "\nresults: %s\n", o.Dir)
	wrote := WriteReport(ctx, o, file, stderr)
	if !run.Complete {
		fmt.Fprintln(stderr, "stockbench: incomplete:", run.Error)
	}
	judged := Judge(m.Policy)(file)
	fmt.Fprintln(stdout)
	for _, l := range judged.Lines {
		fmt.Fprintln(stdout, l)
	}
	return judged.Ending.And(wrote).Tell(stdout)
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
