package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

// shrinkCommand is `stockbench shrink RUN_DIR`: a failing sale of a run searched down to
// the smallest sale that earns the same class, as property-based testing shrinks a
// counterexample. One setting at a time is made smaller (explore.Steps: buyers, stock,
// work, the TTL with the work and the faults, each fault's victim and length, a fault of
// several, an adapter's servers) and kept while a rerun, with the same seed, still earns
// the class; the search ends when nothing more shrinks or its time is up. It prints the smallest sale's
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
	sale, err := saleOf(&first)
	if err == nil {
		_, err = jobOf(sale)
	}
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("shrink: %s: %w", first.Key(), err)))
	}
	e, code := bench.Start(ctx, c.options(nil, nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)

	s := shrinker{e: e, want: first.Verdict.Class, tries: *tries, stderr: stderr}
	fmt.Fprintf(stderr, "stockbench: shrink %s (%s): stockbench %s\n", first.Key(), first.Verdict.Cell(), bench.ShellLine(sale.Args()))
	run, ok := s.earns(ctx, *sale)
	if !ok {
		if ctx.Err() != nil {
			return bench.ExitInterrupted
		}
		fmt.Fprintf(stdout, "shrink: %s did not earn %s again in %d reruns: nothing to shrink from (stockbench replay measures how often it does)\n",
			first.Key(), first.Verdict.Class, *tries)
		return bench.ExitFailed
	}
	smallest, run, _ := explore.Shrink(ctx, *sale, run, s.earns, time.Now().Add(*budget), 1)
	best := smallest.Args()
	run.Sale = &smallest
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
		first.Key(), first.Params.Buyers, first.Params.Stock, run.Params.Buyers, run.Params.Stock, s.n, run.Verdict.Cell(), run.Verdict)
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
	n      int // sales run
}

// earns runs sale s up to tries times and returns the first run that earned the class.
func (s *shrinker) earns(ctx context.Context, sale results.Sale) (run results.Run, ok bool) {
	j, err := jobOf(&sale)
	if err != nil {
		return results.Run{}, false // a smaller sale the settings refuse
	}
	for t := range s.tries {
		s.n++
		run, err = s.e.Run(ctx, j, fmt.Sprintf("{stockbench:shrink:%d}", s.n), io.Discard)
		if ctx.Err() != nil {
			return results.Run{}, false
		}
		got := string(run.Verdict.Class)
		if err != nil {
			got = "did not finish: " + bench.OneLine(err.Error())
		}
		fmt.Fprintf(s.stderr, "stockbench: shrink [%d] buyers %s, stock %s, think %s, ttl %s, fault %s: %s (try %d of %d)\n",
			s.n, sale.Get("buyers"), sale.Get("stock"), sale.Get("think"), sale.Get("ttl"), sale.Faults, got, t+1, s.tries)
		if err == nil && run.Verdict.Class == s.want {
			return run, true
		}
	}
	return results.Run{}, false
}
