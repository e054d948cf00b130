// Package bench is stockbench's harness: it starts the servers a list of sales needs,
// runs the sales on rigs of them, alone or side by side, and writes the run record and
// its report; cmd/stockbench turns command lines into its calls.
//
// A run is [Execute] with [Options] and a list of [Job]s ([LockJob], [QueueJob]);
// [Start] gives the servers alone, to a command that drives them its own way, and
// [RunShard] runs one shard of a sale shared by several load generators, [Merge] joins
// the shards' records. [Plan] turns names into jobs, [JobOf] a sale value into its job.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/ghactions"
)

// Exit codes a run ends with.
const (
	ExitOK          = 0
	ExitFailed      = 1 // a sale did worse than documented or found damage; a gate or check failed
	ExitUsage       = 2 // bad input, or no Redis: nothing ran
	ExitUnfinished  = 3 // a sale could not finish or be judged (Redis died, say): see ExitRule
	ExitInterrupted = 130
)

// Options are what a run needs besides its jobs; the zero value runs on a Redis the
// harness starts itself (see servers.Config), writes under results/runs, one sale at a
// time.
type Options struct {
	// Redis is where the servers come from.
	Redis servers.Config
	// Out receives the run's directory. Default: results/runs.
	Out string
	// Procs is how many CPUs the buyers' goroutines run on; 0: all but one when Redis
	// runs on this machine, all otherwise, or GOMAXPROCS from the environment.
	Procs int
	// Parallel is how many fault sales of at most 10,000 buyers run side by side, each on
	// servers of its own. Default 1. Sales with no fault always run alone.
	Parallel int
	// Args is the command line the record says made the run; passwords are masked.
	Args []string
	// Notes are what the command leaves out of the run, and why, printed as it starts.
	Notes []string
	// Prepare runs once on the shared server before any sale (designs read from files
	// have it compile their scripts); an error is the user's, and nothing runs.
	Prepare func(context.Context, redis.UniversalClient) error
	// Sale is a job as a value (results.Sale), recorded with the job's run with the
	// command line that reruns it alone. Nil, or a nil result: none is recorded.
	Sale func(Job) *results.Sale
	// Policy is what counts as a failing sale over what the designs document (--fail-on,
	// --expect); the zero value holds each sale to its design's documentation.
	Policy results.Policy
	// Judge reads the finished run for its exit status. Default: Judge(Policy), the
	// rule of every command that runs sales (ExitRule).
	Judge Afterword
	// After, when set, reads the finished run for a verdict of its own (check's
	// thresholds, replay's tally), which adds to Judge's: its lines come first, and the
	// worse of the two codes is the run's.
	After Afterword
	// Repeat, above 1, runs each sale with no fault (the ones the gate's soft rules
	// compare) that many times in all, back to back: the first is the record, and every
	// run's speed goes into its Spread. Default: once.
	Repeat int
	// Runs, above 1, runs each sale that many times with seeds of their own (results.DrawSeed),
	// for the rate of each class and finding (results.Draws): a verdict of a race is a
	// rate, not one draw. The record is each sale's worst draw, judged as a sale is. Draws
	// after the first may run side by side, as fault sales do. Default: once.
	Runs int
	// Plots is which files of its plots the run's report writes under plots/ (see
	// report.Plots); empty: report.DefaultPlots. The record keeps it.
	Plots string
	// Width is the columns of the terminal stdout is, so that tables wider print as
	// records that fit it (report.Table); 0, for a pipe or a file: as wide as they are.
	Width int
	// JUnit, when set, is the file the run's sales are written to as JUnit XML (package
	// junit), after they are judged: for a CI system to show. Default: none.
	JUnit string
	// Format is how the verdict is told besides the text: FormatGitHub adds GitHub
	// Actions' annotations and step summary (package ghactions). Default: text alone.
	Format Format
	// Locate, when set, says where in the repository each annotation points (check's
	// run file, at the thresholds a sale broke). Default: nowhere.
	Locate ghactions.Locator
	// Dashboard, when set, is the address (host:port, or :port on the loopback
	// interface) where the run's live page and its /metrics are served while it goes;
	// the page is saved as dashboard.html in the run's directory at the end. Default:
	// none.
	Dashboard string
}

// Format is how a command tells its verdict, besides its text.
type Format string

// The formats.
const (
	FormatText   Format = "text"   // the tables and lines alone
	FormatGitHub Format = "github" // and an annotation per failed sale, the summary in the job's
)

// ParseFormat reads --format.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatText, FormatGitHub:
		return f, nil
	}
	return "", fmt.Errorf("--format: %q is none of text, github", s)
}

// External reports whether the run is on the user's own Redis: nothing is started, and
// keys carry a lease (scenarios.DefaultKeyLease).
func (o Options) External() bool {
	return o.Redis.URL != "" || o.Redis.Mode == servers.KindExternal
}

func (o Options) out() string {
	if o.Out == "" {
		return "results/runs"
	}
	return o.Out
}

// ErrUsage marks errors that are the user's input, not the run's: exit code 2.
var ErrUsage = errors.New("usage")

// UsageError marks err as the user's input.
func UsageError(err error) error { return fmt.Errorf("%w: %w", ErrUsage, err) }

// Complain prints err on one line of stderr, which says the exit code it returns and
// why, and returns it: ExitUsage for a UsageError ("stockbench: exit 2: run: unknown lock
// ..."), ExitUnfinished for the others (the command could not finish: see ExitRule).
// For nil it prints nothing and returns ExitOK.
func Complain(stderr io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	code := ExitUnfinished
	if errors.Is(err, ErrUsage) {
		code = ExitUsage
	}
	return Abort(stderr, code, OneLine(strings.TrimPrefix(err.Error(), ErrUsage.Error()+": ")))
}

// Abort prints the one line of a command that stops before it could tell more, on
// stderr ("stockbench: exit 130: interrupted before the run began; nothing ran"), and
// returns code.
func Abort(stderr io.Writer, code int, why string) int {
	fmt.Fprintln(stderr, "stockbench:", Ending{Code: code, Why: why}.Line())
	return code
}

// OneLine folds a joined error onto one line.
func OneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

// Version is the build's module version and VCS revision, as the record names its tool.
func Version() string {
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

// NewFile starts the record of a run made by the command line args (after the command's
// name), its passwords masked.
func NewFile(args []string, id string, target results.Target) *results.File {
	return results.NewFile("stockbench "+Version(), redact.Strings(append([]string(nil), args...)), id, target)
}
