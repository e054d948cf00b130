package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// RunShard runs this process's share of a sharded sale (j.Sale.Shard says which), met
// with the other shards in Redis under the run's name runID, and writes it as a partial
// record in dir (results.json, ledger.bin and, from shard 0, final.json) for
// scenarios.Merge. It returns the exit code.
func RunShard(ctx context.Context, o Options, j Job, runID, dir string, stdout, stderr io.Writer) int {
	if err := Writable(filepath.Dir(dir)); err != nil {
		return Complain(stderr, UsageError(err))
	}
	e, code := Start(ctx, o, stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)
	prefix := "{stockbench:" + runID + "}"
	var shard scenarios.Shard
	var runPart func(context.Context, scenarios.Redis, func(scenarios.Progress)) (results.Part, error)
	switch j := j.(type) {
	case LockJob:
		s := j.Sale
		s.Prefix, shard = prefix, s.Shard
		runPart = func(ctx context.Context, r scenarios.Redis, hook func(scenarios.Progress)) (results.Part, error) {
			s.Progress = hook
			return s.RunPart(ctx, r, j.Impl)
		}
	case QueueJob:
		s := j.Sale
		s.Prefix, shard = prefix, s.Shard
		runPart = func(ctx context.Context, r scenarios.Redis, hook func(scenarios.Progress)) (results.Part, error) {
			s.Progress = hook
			return s.RunPart(ctx, r, j.Impl)
		}
	default:
		return Complain(stderr, fmt.Errorf("shard: %T cannot be sharded", j))
	}
	fmt.Fprintf(stderr, "stockbench: shard %s of run %s: %s; waiting for the other shards\n", shard, runID, j.describe())
	began := time.Now().UTC()
	// Every shard runs on the one Redis they share, replicated or not as it is.
	need := j.need()
	need.Replicated = false
	part, err := rig.On(ctx, e.Harness, need, func(ctx context.Context, r scenarios.Redis) (results.Part, error) {
		hook, done := watching(stderr, nil, 0)
		defer done()
		return runPart(ctx, r, hook)
	})
	if err != nil && part.Run.Scenario == "" {
		if ctx.Err() != nil {
			return Abort(stderr, ExitInterrupted, "interrupted before the sale began; nothing was written")
		}
		return Complain(stderr, err)
	}
	file := NewFile(o.Args, runID, e.Shared.Info.Record())
	file.StartedAt, file.FinishedAt, file.Complete, file.Incomplete = began, time.Now().UTC(), part.Run.Complete, part.Run.Error
	file.Runs = []results.Run{part.Run}
	out := results.NewOutput(filepath.Dir(dir), filepath.Base(dir))
	// An earlier attempt's record of this shard (a rerun under the same run id) goes
	// only now that this one has a record to take its place.
	if werr := errors.Join(os.RemoveAll(dir), out.Progress(file), results.WritePart(out, part)); werr != nil {
		return Complain(stderr, werr)
	}
	if q := part.Queue; q != nil {
		fmt.Fprintf(stdout, "shard %s: %d orders sent, %d tasks taken by its workers; started %s late\n",
			shard, len(q.Orders), len(q.Takes), part.Run.Shard.Late.Round(time.Microsecond))
	} else {
		ledger := part.Run.Oracle
		fmt.Fprintf(stdout, "shard %s: %d buyers, %d bought, %d sold out, %d gave up; started %s late\n",
			shard, ledger.Buyers, ledger.Bought, ledger.SoldOut, ledger.GaveUp, part.Run.Shard.Late.Round(time.Microsecond))
	}
	fmt.Fprintf(stdout, "partial record: %s (stockbench merge %s)\n", out.Dir, filepath.Dir(out.Dir))
	switch {
	case err != nil:
		return Complain(stderr, err)
	case ctx.Err() != nil:
		return Exit(stdout, ExitInterrupted, fmt.Sprintf("interrupted; shard %s's part so far is written", shard))
	case !part.Run.Complete:
		fmt.Fprintln(stderr, "stockbench: incomplete:", part.Run.Error)
		return Exit(stdout, ExitUnfinished, fmt.Sprintf("shard %s's sale did not finish: %s", shard, part.Run.Error))
	}
	return Exit(stdout, ExitOK, fmt.Sprintf("shard %s's part is written; stockbench merge judges the sale", shard))
}
