package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/pairgate"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
)

// gateCommand is `stockbench gate`: compare a run with a baseline, and, with --base,
// the change's speed with the base build's in pairs of trials run here and now; exit 1
// with one line per regression.
func gateCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("gate", "gate --baseline FILE [--current DIR] [--rules FILE] [rules] | gate (--base REF | --base-with ARGS --with ARGS) [--pairs N] [--baseline FILE ...] [-- MATRIX ARGS]")
	var trial []string // a trial's matrix arguments, after --
	if i := slices.Index(args, "--"); i >= 0 {
		args, trial = args[:i], args[i+1:]
	}
	baseline := fset.String("baseline", "", "the baseline results.json, or its run directory: the classes and rates a run is held to (required without --base)")
	current := fset.String("current", "", "the run to gate (default: the newest under --runs)")
	runs := fset.String("runs", "results/runs", "where to look for the newest run")
	rulesFile := fset.String("rules", "", "a JSON gate file whose fields override the defaults (see README)")
	baseRef := fset.String("base", "", "time this build against the base `ref` of this checkout (as origin/main), built here, in pairs of trials run one right after the other, each trial a matrix of the speed rows (make bench's sales with no fault, or the matrix arguments after --); speed against --baseline is then information only")
	pairs := fset.Int("pairs", pairgate.DefaultPairs, "pairs of trials --base runs (`n`, at least 3)")
	seed := fset.Uint64("seed", 1, "draws which build runs first in each pair of --base")
	baseWith := fset.String("base-with", "", "the base's own matrix `args`, quoted as a shell quotes them, as --lock-file v1/mine.json: with --with and no --base, two versions of a design timed in pairs on this build")
	with := fset.String("with", "", "the change's own matrix `args`, as --lock-file v2/mine.json (see --base-with)")
	given := gate.Register(fset)
	var redis servers.Config // the trials' servers, as every command that runs sales takes them
	redis.Bind(fset)
	if help, err := parse(fset, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	if _, err := redis.Provider(); err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: --redis, --redis-url: %w", err)))
	}
	rules, err := gate.Load(*rulesFile, *given)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	paired := pairgate.Config{Base: *baseRef, Pairs: *pairs, Seed: *seed, Args: trial, Redis: redis, Log: stderr}
	if err := paired.SetWith(*baseWith, *with); err != nil {
		return bench.Complain(stderr, err)
	}
	if err := paired.Check(*baseline); err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	passed := true
	var ran []string
	if *baseline != "" {
		base, err := readResults(*baseline)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: baseline: %w", err)))
		}
		cur, _, err := results.ReadRunOrNewest(*current, *runs, "--current")
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: current: %w", err)))
		}
		held := rules
		held.SpeedInfo = paired.Timed() // pairs of trials run: this build against another, or two versions of a design
		ok, err := gate.Report(stdout, base, cur, held)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: %w", err)))
		}
		passed = passed && ok
		ran = append(ran, fmt.Sprintf("run %s against baseline %s", cur.ID, base.ID))
	}
	if paired.Timed() {
		ok, err := pairgate.Gate(ctx, paired, rules, stdout)
		if ctx.Err() != nil {
			return bench.Exit(stdout, bench.ExitInterrupted, "gate: interrupted; the base's build and its trials removed")
		} else if err != nil {
			return bench.Complain(stderr, err)
		}
		passed = passed && ok
		ran = append(ran, paired.Against())
	}
	if !passed {
		return bench.Exit(stdout, bench.ExitFailed, strings.Join(ran, "; ")+": regressed (see above)")
	}
	return bench.Exit(stdout, bench.ExitOK, strings.Join(ran, "; ")+": no regression")
}

// baselineCommand is `stockbench baseline`: save a run, slimmed, as the gate's baseline.
func baselineCommand(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("baseline", "baseline [--from RUN_DIR] [--to FILE]")
	from := fset.String("from", "", "the run to keep (default: the newest under --runs)")
	runs := fset.String("runs", "results/runs", "where to look for the newest run")
	to := fset.String("to", "baseline/results.json", "the baseline file to write")
	if help, err := parse(fset, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	f, dir, err := results.ReadRunOrNewest(*from, *runs, "--from")
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("baseline: %w", err)))
	}
	if !f.Complete {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("baseline: %s is incomplete (%s); a baseline must be a whole run", dir, f.Incomplete)))
	}
	if err := os.MkdirAll(filepath.Dir(*to), 0o755); err != nil {
		return bench.Complain(stderr, fmt.Errorf("baseline: %w", err))
	}
	if err := results.WriteFile(*to, results.Slim(f)); err != nil {
		return bench.Complain(stderr, err)
	}
	return bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("%s now holds run %s (%d sales)", *to, f.ID, len(f.Runs)))
}
