package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

// shrinkCommand is `stockbench shrink RUN_DIR`: a failing sale of a run searched down to
// the smallest sale that earns the same class, as property-based testing shrinks a
// counterexample. One setting at a time is halved (buyers, stock, the fault's victim and
// its length) and kept while a rerun, with the same seed, still earns the class; the
// search ends when nothing more halves or its time is up. It prints the smallest sale's
// command and writes its run directory, with the timeline of its violations.
func shrinkCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("shrink", "shrink RUN_DIR [--only TEXT] [--tries N] [--budget DURATION]")
	c := &common{parallel: 1}
	c.bind(fs)
	only := fs.String("only", "", "shrink the first harmful sale whose scenario/design/fault contains this `text` (default: the first harmful sale)")
	tries := fs.Int("tries", 3, "reruns of a smaller sale before it is judged not to earn the class: real Redis adds timing")
	budget := fs.Duration("budget", 5*time.Minute, "how long the search may take")
	dirs, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	switch {
	case len(dirs) != 1:
		return bench.Complain(stderr, bench.UsageError(errors.New("shrink: name one run directory (results/runs/ID)")))
	case *tries < 1:
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("shrink: --tries must be positive, got %d", *tries)))
	case *budget <= 0:
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("shrink: --budget must be positive, got %s", *budget)))
	case c.dashboard != "":
		return bench.Complain(stderr, bench.UsageError(errors.New("shrink: --dashboard watches a run; run the smallest sale shrink prints with it")))
	}
	orig, err := readResults(dirs[0])
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	i := slices.IndexFunc(orig.Runs, func(r results.Run) bool {
		rank, _ := r.Verdict.Class.Rank()
		return rank > 0 && len(r.Rerun) > 0 && strings.Contains(r.Key(), *only)
	})
	if i < 0 {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("shrink: no harmful sale with a recorded command in %s matches %q", dirs[0], *only)))
	}
	first := orig.Runs[i]
	if _, _, _, err := runJobs(first.Rerun[1:], io.Discard); err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("shrink: %s: its command: %w", first.Key(), err)))
	}
	e, code := bench.Start(ctx, c.options(nil, nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)

	s := shrinker{e: e, want: first.Verdict.Class, tries: *tries, stderr: stderr, n: new(int), failed: map[string]bool{}}
	fmt.Fprintf(stderr, "stockbench: shrink %s (%s): stockbench %s\n", first.Key(), first.Verdict.Cell(), bench.ShellLine(first.Rerun))
	best, run, ok := s.search(ctx, first.Rerun, time.Now().Add(*budget))
	if !ok {
		if ctx.Err() != nil {
			return bench.ExitInterrupted
		}
		fmt.Fprintf(stdout, "shrink: %s did not earn %s again in %d reruns: nothing to shrink from (stockbench replay measures how often it does)\n",
			first.Key(), first.Verdict.Class, *tries)
		return bench.ExitFailed
	}
	run.Rerun = best
	id := results.NewID()
	out := results.NewOutput(c.out, id)
	file := bench.NewFile(append([]string{"shrink"}, args...), id, e.Shared.Info.Record())
	file.Plots = string(*c.plots)
	file.StartedAt, file.FinishedAt, file.Complete, file.Runs = run.Started, time.Now().UTC(), true, []results.Run{run}
	if err := out.Progress(file); err != nil {
		return bench.Complain(stderr, fmt.Errorf("shrink: %w", err))
	}
	if err := report.Write(context.WithoutCancel(ctx), out, file); err != nil {
		return bench.Complain(stderr, fmt.Errorf("shrink: report: %w", err))
	}
	fmt.Fprintf(stdout, "shrink: %s from %d buyers and a stock of %d to %d buyers and a stock of %d in %d sales: %s (%s)\n",
		first.Key(), first.Params.Buyers, first.Params.Stock, run.Params.Buyers, run.Params.Stock, *s.n, run.Verdict.Cell(), run.Verdict)
	fmt.Fprintf(stdout, "smallest: stockbench %s\n", bench.ShellLine(best))
	fmt.Fprintf(stdout, "results: %s\n", out.Dir)
	return bench.ExitOK
}

// shrinker reruns smaller sales on one Redis, and keeps one while it earns want.
type shrinker struct {
	e      *bench.Env
	want   oracle.Class
	tries  int
	stderr io.Writer
	n      *int // sales run
	// failed are the sales already found not to earn the class, by command line.
	failed map[string]bool
}

// step is one way to make a sale smaller: the args of the smaller sale, or false when
// args cannot get smaller this way.
type step struct {
	name  string
	apply func(args []string) ([]string, bool)
}

// Stock goes first: a sale cannot oversell with fewer buyers than units.
var steps = []step{
	{"stock", halveFlag("--stock")},
	{"buyers", halveFlag("--buyers")},
	{"waves", halveFlag("--waves")}, // a drop's; absent from a sale of buyers
	{"victim", halveFault(func(f *faults.Fault, _ time.Duration) bool {
		n := cmp.Or(f.Nth, faults.DefaultNth)
		f.Nth = n / 2
		return n > 1
	})},
	{"fault length", halveFault(func(f *faults.Fault, base time.Duration) bool {
		length := &f.For // how long it lasts, or for a clock jump how far it goes
		switch {
		case f.Kind == faults.ClockJump:
			length = &f.By
		case !slices.Contains([]faults.Kind{faults.SlowWork, faults.ClientPause, faults.RedisPause, faults.WorkerPause}, f.Kind):
			return false
		}
		if base <= 0 {
			return false
		}
		d := cmp.Or(*length, time.Duration(float64(base)*faults.DefaultLength))
		*length = d / 2
		return d >= 2*time.Millisecond
	})},
}

// search halves one setting at a time, round after round, while the smaller sale earns
// the class, until no step applies or the deadline passes. It first reruns args itself:
// a class that does not come back cannot be shrunk. It returns the smallest sale's args
// and its run.
func (s shrinker) search(ctx context.Context, args []string, deadline time.Time) ([]string, results.Run, bool) {
	best, ok := s.earns(ctx, args)
	if !ok {
		return nil, results.Run{}, false
	}
	for smaller := true; smaller && time.Now().Before(deadline) && ctx.Err() == nil; {
		smaller = false
		for _, st := range steps {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				next, can := st.apply(args)
				if !can {
					break
				}
				run, ok := s.earns(ctx, next)
				if !ok {
					break
				}
				args, best, smaller = next, run, true
			}
		}
	}
	return args, best, true
}

// earns runs the sale args describe up to tries times and returns the first run that
// earned the class.
func (s shrinker) earns(ctx context.Context, args []string) (run results.Run, ok bool) {
	_, jobs, _, err := runJobs(args[1:], io.Discard)
	if err != nil || s.failed[bench.ShellLine(args)] {
		return results.Run{}, false // a smaller sale the settings refuse, or tried
	}
	defer func() {
		if ctx.Err() == nil && !ok {
			s.failed[bench.ShellLine(args)] = true
		}
	}()
	for t := range s.tries {
		*s.n++
		run, err = s.e.Run(ctx, jobs[0], fmt.Sprintf("{stockbench:shrink:%d}", *s.n), io.Discard)
		if ctx.Err() != nil {
			return results.Run{}, false
		}
		got := string(run.Verdict.Class)
		if err != nil {
			got = "did not finish: " + bench.OneLine(err.Error())
		}
		fmt.Fprintf(s.stderr, "stockbench: shrink [%d] %s: %s (try %d of %d)\n", *s.n, sizes(args), got, t+1, s.tries)
		if err == nil && run.Verdict.Class == s.want {
			return run, true
		}
	}
	return results.Run{}, false
}

// sizes is what a shrink changes, as a progress line shows it.
func sizes(args []string) string {
	return fmt.Sprintf("buyers %s, stock %s, fault %s", flagValue(args, "--buyers"), flagValue(args, "--stock"), flagValue(args, "--fault"))
}

// halveFlag halves an integer flag, down to 1.
func halveFlag(name string) func([]string) ([]string, bool) {
	return func(args []string) ([]string, bool) {
		n, err := strconv.ParseInt(flagValue(args, name), 10, 64)
		if err != nil || n <= 1 {
			return nil, false
		}
		return withFlag(args, name, strconv.FormatInt(n/2, 10)), true
	}
}

// halveFault changes each fault of the plan with change, which is given the length a
// fault's default is counted in (the TTL, or a queue's visibility timeout) and reports
// whether it made the fault smaller.
func halveFault(change func(f *faults.Fault, base time.Duration) bool) func([]string) ([]string, bool) {
	return func(args []string) ([]string, bool) {
		plan, err := faults.Parse(flagValue(args, "--fault"))
		if err != nil || len(plan) == 0 {
			return nil, false
		}
		base, _ := time.ParseDuration(cmp.Or(flagValue(args, "--ttl"), flagValue(args, "--visibility")))
		changed := false
		for i := range plan {
			changed = change(&plan[i], base) || changed
		}
		if !changed {
			return nil, false
		}
		return withFlag(args, "--fault", plan.String()), true
	}
}

// flagValue is the value of flag name in args ("--name value"), or "".
func flagValue(args []string, name string) string {
	if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// withFlag is args with flag name set to v.
func withFlag(args []string, name, v string) []string {
	out := slices.Clone(args)
	if i := slices.Index(out, name); i >= 0 && i+1 < len(out) {
		out[i+1] = v
		return out
	}
	return append(out, name, v)
}
