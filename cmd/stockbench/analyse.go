package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/analysis"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/results"
)

// analyseCommand is `stockbench analyse CLAIMS.json`: one library at one release
// measured against what its own docs claim (package analysis), and its page written;
// `analyse --render DIR` renders a pages directory again without measuring.
func analyseCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("analyse", "analyse CLAIMS.json [--pages DIR] [flags]   |   analyse --render DIR")
	c := &common{parallel: 2 * runtime.NumCPU()}
	c.bind(fs)
	parallel := fs.Int("parallel", 0, "at most `n` sales at once, each on servers of its own (default: the claims file's parallel, else two per CPU; the user's own Redis: one)")
	runs := fs.Int("runs", 0, "draws per fault (default: the claims file's runs, else 20)")
	budget := fs.String("budget", "", "explore for this long after the cells, for what they leave open (default: the claims file's explore.budget; 0: no exploration)")
	shrink := fs.Duration("shrink", time.Minute, "how long each finding's shrink may take")
	pages := fs.String("pages", "", "write the page into `DIR`: DIR/LIBRARY.md, its claims and record under DIR/claims and DIR/records, and DIR/README.md over every page there (default: a directory of its own under --out)")
	render := fs.String("render", "", "render the pages of `DIR` again from their claims and records, measuring nothing (after a claim's wording, mapping or tracker lookup changed)")
	pos, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if *render != "" {
		if len(pos) > 0 {
			return bench.Complain(stderr, bench.UsageError(errors.New("analyse: --render DIR takes no claims file")))
		}
		if err := analysis.Render(*render); err != nil {
			return bench.Complain(stderr, bench.UsageError(err))
		}
		return bench.Exit(stdout, bench.ExitOK, "the pages of "+*render+" rendered again")
	}
	plan, err := c.analysePlan(pos, *runs, *parallel, *budget, *shrink)
	if err == nil {
		err = bench.Writable(c.out)
	}
	if err == nil && *pages != "" {
		err = bench.Writable(*pages)
	}
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	e, code := bench.Start(ctx, c.options(append([]string{"analyse"}, args...), nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)
	plan.cfg.Explore.Space.Fine = plan.cfg.Sale.Kind == results.LockSale && c.designs.Ms([]string{plan.cfg.Sale.Design})
	if !e.Shared.Info.Owned {
		plan.cfg.Parallel, plan.cfg.Explore.Parallel = 1, 1
	}
	var n atomic.Int64
	plan.cfg.Run = func(ctx context.Context, s results.Sale) (results.Run, error) {
		j, err := bench.JobOf(&s)
		if err != nil {
			return results.Run{}, err
		}
		return e.RunApart(ctx, j, fmt.Sprintf("{stockbench:analyse:%d}", n.Add(1)))
	}
	plan.cfg.Explore.Run = func(ctx context.Context, s results.Sale, _ int) (results.Run, error) { return plan.cfg.Run(ctx, s) }
	t := e.Shared.Info.Record()
	plan.cfg.Machine = fmt.Sprintf("%d CPUs, Redis %s as a %s", runtime.NumCPU(), t.Version, t.Kind)
	plan.cfg.Progress = func(line string) { fmt.Fprintln(stderr, "stockbench: analyse:", line) }
	fmt.Fprintf(stderr, "stockbench: analyse %s %s: %d faults, %d draws each, up to %d sales at once\n", plan.cfg.Claims.Title, plan.cfg.Claims.Release, len(plan.cfg.Cells), plan.cfg.Runs, plan.cfg.Parallel)
	rec := analysis.Analyse(ctx, plan.cfg)
	dir := *pages
	if dir == "" {
		dir = filepath.Join(c.out, "analyse-"+results.NewID())
	}
	if err := analysis.Write(dir, plan.file, rec); err != nil {
		return bench.Told(bench.Complain(stderr, err)).Tell(stdout)
	}
	an := analysis.Analysis{Claims: plan.cfg.Claims, Record: rec}
	fmt.Fprintf(stdout, "%s %s: %s\npage: %s\n", plan.cfg.Claims.Title, plan.cfg.Claims.Release, an.Headline(), filepath.Join(dir, rec.Library+".md"))
	if !rec.Complete {
		return bench.Exit(stdout, bench.ExitInterrupted, "interrupted; the page says what was measured until then")
	}
	return bench.Exit(stdout, bench.ExitOK, "the library measured against its claims and its page written")
}

// analysePlan is an analysis of the claims file pos names, checked: its design, its
// settings, its faults against its kind of sale.
type analysePlan struct {
	file string
	cfg  analysis.Config
}

func (c *common) analysePlan(pos []string, runs, parallel int, budget string, shrink time.Duration) (*analysePlan, error) {
	if len(pos) != 1 {
		return nil, fmt.Errorf("analyse: name one claims file (see docs/analyses/claims), got %d", len(pos))
	}
	cl, err := analysis.Read(pos[0])
	if err != nil {
		return nil, err
	}
	// The design flags, as the command line would give them.
	dfs := flag.NewFlagSet("design", flag.ContinueOnError)
	dfs.SetOutput(io.Discard)
	bindDesigns(dfs, &c.designs)
	lock := dfs.String("lock", "", "")
	queue := dfs.String("queue", "", "")
	if err := dfs.Parse(cl.Design); err != nil || dfs.NArg() > 0 {
		return nil, fmt.Errorf("%s: design: %w", pos[0], errors.Join(err, unexpected(dfs.Args())))
	}
	var locks, queues []string
	if *lock != "" {
		locks = []string{*lock}
	}
	if *queue != "" {
		queues = []string{*queue}
	}
	x, err := c.exploreConfig(locks, queues, "", false)
	if err == nil && len(x.Designs) != 1 {
		err = fmt.Errorf("names %d designs; an analysis takes one", len(x.Designs))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: design: %w", pos[0], err)
	}
	sale := x.Designs[0]
	for name, v := range cl.Settings {
		sale.Set(name, v)
	}
	if _, err := bench.JobOf(&sale); err != nil {
		return nil, fmt.Errorf("%s: settings: %w", pos[0], err)
	}
	cells, err := cl.Cells(sale.Kind)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pos[0], err)
	}
	cfg := analysis.Config{Claims: cl, Sale: sale, Cells: cells, Runs: cl.Runs, Parallel: c.parallel, Shrink: shrink, Explore: x}
	if runs != 0 {
		cfg.Runs = runs
	}
	if cfg.Runs == 0 {
		cfg.Runs = analysis.DefaultRuns
	}
	if cfg.Runs < analysis.MinRuns || cfg.Runs > 1000 {
		return nil, fmt.Errorf("analyse: --runs must be from %d to 1000, got %d", analysis.MinRuns, cfg.Runs)
	}
	switch {
	case parallel != 0:
		cfg.Parallel = parallel
	case cl.Parallel != 0:
		cfg.Parallel = cl.Parallel
	}
	if cfg.Parallel < 1 || shrink < 0 {
		return nil, errors.New("analyse: --parallel must be at least 1 and --shrink not negative")
	}
	if budget == "" && cl.Explore != nil {
		budget = cl.Explore.Budget
		cfg.Explore.Seed = cl.Explore.Seed
	}
	if budget != "" && budget != "0" {
		if cfg.Explore.Budget, err = time.ParseDuration(budget); err != nil || cfg.Explore.Budget < 10*time.Second {
			return nil, fmt.Errorf("analyse: --budget: want 0 or a duration of at least 10s, got %q", budget)
		}
		cfg.Explore.Confirm, cfg.Explore.Parallel = analysis.Reruns, explore.DefaultParallel
	}
	return &analysePlan{file: pos[0], cfg: cfg}, nil
}

// unexpected is an error naming the first argument no flag took, or nil.
func unexpected(rest []string) error {
	if len(rest) == 0 {
		return nil
	}
	return fmt.Errorf("unexpected argument %q", rest[0])
}
