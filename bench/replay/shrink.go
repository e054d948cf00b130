package replay

import (
	"context"
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

// ShrinkConfig is what a shrink searches: the first harmful sale of the run in Dir whose
// key contains Only.
type ShrinkConfig struct {
	Dir, Only string
	// Tries is how many reruns of a smaller sale run before it is judged not to earn the
	// class: real Redis adds timing.
	Tries int
	// Budget is how long the search may take.
	Budget time.Duration
	// SaleOf reads the run's sale. Default: Recorded.
	SaleOf SaleOf
	// Out receives the smallest sale's run directory; Plots is which plot files its
	// report writes; Args is the command line its record keeps.
	Out, Plots string
	Args       []string
}

// Pick reads the run and the sale cfg shrinks, checked, before anything starts; its
// errors are usage errors.
func (cfg ShrinkConfig) Pick() (results.Run, *results.Sale, error) {
	switch {
	case cfg.Tries < 1:
		return results.Run{}, nil, bench.UsageError(fmt.Errorf("shrink: --tries must be positive, got %d", cfg.Tries))
	case cfg.Budget <= 0:
		return results.Run{}, nil, bench.UsageError(fmt.Errorf("shrink: --budget must be positive, got %s", cfg.Budget))
	}
	orig, err := results.ReadRun(cfg.Dir)
	if err != nil {
		return results.Run{}, nil, bench.UsageError(err)
	}
	i := slices.IndexFunc(orig.Runs, func(r results.Run) bool {
		rank, _ := r.Verdict.Class.Rank()
		return rank > 0 && len(r.Rerun) > 0 && strings.Contains(r.Key(), cfg.Only)
	})
	if i < 0 {
		return results.Run{}, nil, bench.UsageError(fmt.Errorf("shrink: no harmful sale with a recorded command in %s matches %q", cfg.Dir, cfg.Only))
	}
	first := orig.Runs[i]
	saleOf := cfg.SaleOf
	if saleOf == nil {
		saleOf = Recorded
	}
	sale, err := saleOf(&first)
	if err == nil {
		_, err = bench.JobOf(sale)
	}
	if err != nil {
		return first, nil, bench.UsageError(fmt.Errorf("shrink: %s: %w", first.Key(), err))
	}
	return first, sale, nil
}

// Shrink searches the sale cfg picks down to the smallest sale that earns the same
// class on e, as property-based testing shrinks a counterexample. One setting at a time
// is made smaller (explore.Steps: buyers, stock, work, the TTL with the work and the
// faults, each fault's victim and length, a fault of several, an adapter's servers) and
// kept while a rerun, with the same seed, still earns the class; the search ends when
// nothing more shrinks or its time is up. It prints the smallest sale's command, writes
// its run directory with the timeline of its violations, and returns the exit code: 1
// when the sale did not earn its class again.
func Shrink(ctx context.Context, e *bench.Env, cfg ShrinkConfig, stdout, stderr io.Writer) int {
	first, sale, err := cfg.Pick()
	if err != nil {
		return bench.Complain(stderr, err)
	}
	s := shrinker{e: e, want: first.Verdict.Class, tries: cfg.Tries, stderr: stderr}
	fmt.Fprintf(stderr, "stockbench: shrink %s (%s): stockbench %s\n", first.Key(), first.Verdict.Cell(), bench.ShellLine(sale.Args()))
	run, ok := s.earns(ctx, *sale)
	if !ok {
		if ctx.Err() != nil {
			return bench.Exit(stdout, bench.ExitInterrupted, "interrupted before the sale earned its class again; nothing was shrunk")
		}
		return bench.Exit(stdout, bench.ExitFailed, fmt.Sprintf("%s did not earn %s again in %d reruns: nothing to shrink from (stockbench replay measures how often it does)",
			first.Key(), first.Verdict.Class, cfg.Tries))
	}
	smallest, run, _ := explore.Shrink(ctx, *sale, run, s.earns, time.Now().Add(cfg.Budget), 1)
	best := smallest.Args()
	run.Sale, run.Rerun = &smallest, best
	id := results.NewID()
	out := results.NewOutput(cfg.Out, id)
	file := bench.NewFile(cfg.Args, id, e.Shared.Info.Record())
	file.Plots = cfg.Plots
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
	if ctx.Err() != nil {
		return bench.Exit(stdout, bench.ExitInterrupted, "interrupted; the smallest sale found until then is written")
	}
	return bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("shrunk to %d buyers and a stock of %d, %s", run.Params.Buyers, run.Params.Stock, run.Verdict.Cell()))
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
	j, err := bench.JobOf(&sale)
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
