// Command stockbench puts Redis locks and queues under a flash sale and reports whether
// they oversell or lose orders, and what they cost. It reads command lines into calls
// of package bench, the harness, which starts the servers, runs the sales and writes
// the record.
//
//	stockbench list                          implementations and scenarios
//	stockbench run --lock NAME [flags]       one scenario with one lock
//	stockbench matrix [flags]                every lock x the default scenarios
//	stockbench check [FILE]                  a run file's designs, judged by its thresholds
//	stockbench report DIR [DIR...]           rebuild a report, or compare runs side by side
//	stockbench replay DIR [--times N]        rerun a run's sales: does each earn its class again?
//	stockbench shrink DIR                    the smallest sale with a failing sale's class
//	stockbench explore --lock A [--lock B]   search faults, timings and loads for findings; compare designs
//	stockbench merge SHARD_DIR...            join a sharded sale's partial records
//	stockbench gate --baseline FILE          compare a run with a baseline, for CI
//	stockbench guarantees DIR                a run's queue guarantee sheet, as Markdown
//	stockbench repro [NAME]                  the track record: real libraries' bugs, each reproduced
//
// Exit codes: every command that runs sales (run, matrix, sweep, check, replay, merge,
// repro) follows bench.ExitRule: 0 every sale earned what its design documents, 1 one
// did worse or found undocumented damage (or --fail-on, --expect say it failed), 2 bad
// input, 3 a sale could not finish or be judged, 130 interrupted. gate and check also
// exit 1 for a regression or a broken threshold; shrink exits 1 when the sale did not
// earn its class again. Interrupted and unfinished runs still write what they measured.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/host"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"

	// Library designs with heavy dependencies register themselves here, not in the
	// packages every sale imports.
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
)

const usage = `stockbench: does your Redis lock oversell a flash sale, and what does it cost?

Usage:
  stockbench list [--lock-file F]       name the lock and queue designs, faults and scenarios
  stockbench run --lock NAME [flags]    run one scenario with one lock
  stockbench matrix [flags]             run every lock x the default scenarios
  stockbench sweep --lock A[,B] --vary SETTING=FROM..TO:N
                                        one sale per value of one setting: damage, sales/s and p99 against it
  stockbench check [FILE]               run a run file (default stockbench.json) and judge it by its
                                        thresholds and baseline: exit 0 held, 1 broken, 2 bad input
  stockbench run --lock NAME --shard i/n --redis-url URL
                                        one shard of a sale run by n load generators on one Redis
  stockbench explore --lock A [--lock B] [--budget 10m]
                                        search the faults, modes, timings and loads the designs can take for
                                        findings nobody aimed at; shrink each, measure its rate, and compare
                                        the designs draw for draw with an exact test
  stockbench merge SHARD_DIR... [--out DIR]
                                        join the shards' records into the sale's: verdict, latencies, report
  stockbench report RUN_DIR [RUN_DIR...]
                                        rebuild a run's report.html, or compare runs side by side
  stockbench replay RUN_DIR [--times N] [--only TEXT]
                                        rerun a run's sales from their recorded commands: does each earn its class again?
  stockbench shrink RUN_DIR [--only TEXT]
                                        search a failing sale down to the smallest with the same class
  stockbench gate --baseline FILE [--current RUN_DIR]
                                        exit 1, with reasons, if the run regressed from the baseline
  stockbench guarantees RUN_DIR         the delivery guarantee each queue design showed under each fault,
                                        as Markdown (make guarantees writes docs/guarantees.md with it)
  stockbench repro [NAME...] [--all]    the track record: real bugs from real libraries' trackers, each
                                        reproduced by a sale on the release that has it
  stockbench compare OLD NEW           per sale, what changed between two runs: a class, the latency's
                                        shift with a Mann-Whitney U test, the damage rates' intervals
  stockbench baseline [--from RUN_DIR]  save a run (the newest by default) as baseline/results.json
  stockbench perf                       the driver against redis-benchmark, and its RSS with 200,000 and 1,000,000 waiting buyers
  stockbench plan --buyers N --rate R   how many shards of which size, and what Redis, a sale needs, from
                                        its per-buyer costs measured here
  stockbench version

Run 'stockbench COMMAND -h' for a command's flags.

` + bench.ExitRule + "\n"

// columns is the width of the terminal stdout is (0 for a pipe or a file): tables wider
// are printed as records that fit it.
var columns int

// quietRedis drops go-redis's own log lines: every failure it logs reaches the user as
// an error, once, on one line.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// main runs the command line: passwords on it or in STOCKBENCH_REDIS_URL are hidden
// from every output, and Ctrl-C or SIGTERM stops the run (a second one kills at once).
func main() {
	redis.SetLogger(quietRedis{})
	columns = host.Columns(os.Stdout)
	// Passwords are known before anything can print them: every output hides them.
	for _, a := range append(os.Args[1:], servers.FromEnv().URL) {
		redact.URL(a)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	os.Exit(cli(ctx, os.Args[1:], redacting{os.Stdout}, redacting{os.Stderr}))
}

// cli runs one command line and returns the exit code.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return bench.ExitUsage
	}
	var err error
	switch args[0] {
	case "list":
		return listCommand(args[1:], stdout, stderr)
	case "run":
		return runCommand(ctx, args[1:], stdout, stderr)
	case "sweep":
		return sweepCommand(ctx, args[1:], stdout, stderr)
	case "matrix":
		return matrixCommand(ctx, args[1:], stdout, stderr)
	case "check":
		return checkCommand(ctx, args[1:], stdout, stderr)
	case "report":
		return reportCommand(ctx, args[1:], stdout, stderr)
	case "replay":
		return replayCommand(ctx, args[1:], stdout, stderr)
	case "shrink":
		return shrinkCommand(ctx, args[1:], stdout, stderr)
	case "explore":
		return exploreCommand(ctx, args[1:], stdout, stderr)
	case "merge":
		return mergeCommand(ctx, args[1:], stdout, stderr)
	case "gate":
		return gateCommand(args[1:], stdout, stderr)
	case "compare":
		return compareCommand(args[1:], stdout, stderr)
	case "baseline":
		return baselineCommand(args[1:], stdout, stderr)
	case "guarantees":
		return guaranteesCommand(args[1:], stdout, stderr)
	case "repro":
		return reproCommand(ctx, args[1:], stdout, stderr)
	case "perf":
		return perfCommand(ctx, args[1:], stdout, stderr)
	case "plan":
		return planCommand(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "stockbench", bench.Version())
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = bench.UsageError(fmt.Errorf("unknown command %q (commands: list, run, sweep, matrix, check, merge, report, replay, shrink, explore, gate, compare, baseline, guarantees, repro, perf, plan, version)", args[0]))
	}
	return bench.Complain(stderr, err)
}

// redacting masks passwords in what it writes (see package redact). Messages are written
// whole, each in one call, so a password is never split between two writes.
type redacting struct{ w io.Writer }

func (r redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, redact.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
