// Package bench is stockbench's harness: it starts the servers a list of sales needs,
// runs the sales on rigs of them, writes the run record, and behind Main, the stockbench
// command's subcommands (run, matrix, check, gate, ...), which cmd/stockbench calls.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"
)

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitInterrupted = 130
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
  stockbench baseline [--from RUN_DIR]  save a run (the newest by default) as baseline/results.json
  stockbench perf                       the driver against redis-benchmark, and its RSS with 200,000 and 1,000,000 waiting buyers
  stockbench version

Run 'stockbench COMMAND -h' for a command's flags.
`

// quietRedis drops go-redis's own log lines: every failure it logs reaches the user as
// an error, once, on one line.
type quietRedis struct{}

func (quietRedis) Printf(context.Context, string, ...any) {}

// Main runs the stockbench command with os.Args and returns its exit code: passwords on
// the command line or in STOCKBENCH_REDIS_URL are hidden from every output, and Ctrl-C or
// SIGTERM stops the run (a second one kills at once).
func Main() int {
	redis.SetLogger(quietRedis{})
	// Passwords are known before anything can print them: every output hides them.
	for _, a := range append(os.Args[1:], servers.FromEnv().URL) {
		redact.URL(a)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C kills at once
	}()
	return cli(ctx, os.Args[1:], redacting{os.Stdout}, redacting{os.Stderr})
}

// cli runs one command line and returns the exit code.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
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
	case "merge":
		return mergeCommand(ctx, args[1:], stdout, stderr)
	case "gate":
		return gateCommand(args[1:], stdout, stderr)
	case "baseline":
		return baselineCommand(args[1:], stdout, stderr)
	case "perf":
		return perfCommand(ctx, args[1:], stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, "stockbench", version())
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
	default:
		err = usageError(fmt.Errorf("unknown command %q (commands: list, run, sweep, matrix, check, merge, report, replay, shrink, gate, baseline, perf, version)", args[0]))
	}
	return complain(stderr, err)
}

// errUsage marks errors that are the user's input, not the run's: exit code 2.
var errUsage = errors.New("usage")

func usageError(err error) error { return fmt.Errorf("%w: %w", errUsage, err) }

// redacting masks passwords in what it writes (see package redact). Messages are written
// whole, each in one call, so a password is never split between two writes.
type redacting struct{ w io.Writer }

func (r redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, redact.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// complain prints err on one line and returns its exit code.
func complain(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": ")
	fmt.Fprintln(stderr, "stockbench:", oneLine(msg))
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitFailed
}

// oneLine folds a joined error onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}
