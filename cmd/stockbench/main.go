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
	"github.com/stockbench/stockbench/bench/docs"
	"github.com/stockbench/stockbench/internal/host"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"

	// Library designs with heavy dependencies register themselves here, not in the
	// packages every sale imports.
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
)

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

// commands binds each command of docs.Commands to its code; TestCommandsBound holds the
// two to the same names.
var commands = map[string]func(ctx context.Context, args []string, stdout, stderr io.Writer) int{
	"init":       ignoreCtx(initCommand),
	"list":       ignoreCtx(listCommand),
	"run":        runCommand,
	"sweep":      sweepCommand,
	"matrix":     matrixCommand,
	"check":      checkCommand,
	"report":     reportCommand,
	"replay":     replayCommand,
	"shrink":     shrinkCommand,
	"explore":    exploreCommand,
	"analyse":    analyseCommand,
	"merge":      mergeCommand,
	"gate":       gateCommand,
	"compare":    ignoreCtx(compareCommand),
	"baseline":   ignoreCtx(baselineCommand),
	"guarantees": ignoreCtx(guaranteesCommand),
	"repro":      reproCommand,
	"perf":       perfCommand,
	"plan":       planCommand,
	"version": func(_ context.Context, args []string, stdout, stderr io.Writer) int {
		if len(args) > 0 {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("version: takes no arguments, got %q", args)))
		}
		fmt.Fprintln(stdout, "stockbench", bench.Version())
		return bench.Exit(stdout, bench.ExitOK, "the build's version printed")
	},
}

func ignoreCtx(f func(args []string, stdout, stderr io.Writer) int) func(context.Context, []string, io.Writer, io.Writer) int {
	return func(_ context.Context, args []string, stdout, stderr io.Writer) int { return f(args, stdout, stderr) }
}

// cli runs one command line and returns the exit code.
func cli(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, docs.Usage())
		return bench.Abort(stderr, bench.ExitUsage, "name a command")
	}
	if run, ok := commands[args[0]]; ok {
		return run(ctx, args[1:], stdout, stderr)
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, docs.Usage())
		return bench.Exit(stdout, bench.ExitOK, "the usage printed")
	}
	return bench.Complain(stderr, bench.UsageError(fmt.Errorf("unknown command %q (commands: %s)", args[0], docs.Names())))
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
