package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

// exploreCommand is `stockbench explore`: the sales a design can be put through,
// searched for what nobody aimed at (package explore), on one design or on several
// compared draw for draw.
func exploreCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explore", "explore --lock A [--lock B] [--budget 10m] [--seed N] [flags]")
	c := &common{parallel: explore.DefaultParallel}
	c.bind(fs)
	fs.IntVar(&c.parallel, "parallel", c.parallel, "`n` sales at once, each on servers of its own (drawn sales are small and mostly wait on their work and their faults; the user's own Redis: one)")
	c.bindPolicy(fs)
	bindDesigns(fs, &c.designs)
	var locks, queues []string
	fs.Func("lock", "a lock design to explore, by name (built in, or from --lock-file, --lock-exec); repeat it to compare designs draw for draw", func(s string) error { locks = append(locks, s); return nil })
	fs.Func("queue", "a queue design to explore, by name; repeatable, as --lock", func(s string) error { queues = append(queues, s); return nil })
	budget := fs.Duration("budget", explore.DefaultBudget, "how long the exploration takes in all: searching, then shrinking and measuring each finding")
	seed := fs.Uint64("seed", 1, "seed of the draws: the same seed draws the same sales for the same outcomes")
	confirm := fs.Int("confirm", explore.DefaultConfirm, "reruns of each finding's smallest sale per design, for its rate and the exact test")
	infra := fs.Bool("infra", false, "draw the faults on a Sentinel group or a Cluster too (slower: each sale starts a topology of containers)")
	only := fs.String("faults", "", "draw only these faults, comma-separated, or none for timings and loads alone (default: every fault the table has for the designs' sales: "+explore.AllFaults()+")")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	cfg, err := c.exploreConfig(locks, queues, *only, *infra)
	if err == nil {
		err = exploreLimits(*budget, *confirm, c.parallel)
	}
	if err == nil && c.dashboard != "" {
		err = errors.New("explore: --dashboard watches one run; rerun a finding's smallest sale with it")
	}
	if err == nil {
		err = bench.Writable(c.out)
	}
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	cfg.Budget, cfg.Seed, cfg.Confirm, cfg.Parallel = *budget, *seed, *confirm, c.parallel
	return c.runExplore(ctx, cfg, append([]string{"explore"}, args...), nil, stdout, stderr)
}

// runExplore starts the servers, explores, and writes and prints what was found (see
// writeExplore); args is the command line that made the run, for its record.
func (c *common) runExplore(ctx context.Context, cfg explore.Config, args []string, judge bench.Afterword, stdout, stderr io.Writer) int {
	e, code := bench.Start(ctx, c.options(args, nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)
	if !e.Shared.Info.Owned {
		cfg.Parallel = 1 // no servers of a sale's own on the user's Redis
	}
	runtime.GOMAXPROCS(runtime.NumCPU()) // side by side, the sales mostly wait
	var n atomic.Int64
	cfg.Run = func(ctx context.Context, s results.Sale, _ int) (results.Run, error) {
		j, err := jobOf(&s)
		if err != nil {
			return results.Run{}, fmt.Errorf("%w: %w", explore.ErrRefused, err)
		}
		return e.RunApart(ctx, j, fmt.Sprintf("{stockbench:explore:%d}", n.Add(1)))
	}
	cfg.Progress = func(line string) { fmt.Fprintln(stderr, "stockbench:", line) }
	fmt.Fprintf(stderr, "stockbench: explore %s for %s, seed %d, %d sales at once; Ctrl-C keeps what was found\n",
		strings.Join(designNames(cfg.Designs), " against "), cfg.Budget, cfg.Seed, cfg.Parallel)
	rep, err := explore.Explore(ctx, cfg)
	if err != nil {
		return bench.Complain(stderr, err)
	}
	return c.writeExplore(ctx, rep, e, args, judge, stdout, stderr)
}

// exploreLimits refuses settings an exploration cannot use.
func exploreLimits(budget time.Duration, confirm, parallel int) error {
	switch {
	case budget < 10*time.Second:
		return fmt.Errorf("explore: --budget must be at least 10s, got %s", budget)
	case confirm < 1 || confirm > 1000:
		return fmt.Errorf("explore: --confirm must be from 1 to 1000, got %d", confirm)
	case parallel < 1:
		return fmt.Errorf("explore: --parallel must be at least 1, got %d", parallel)
	}
	return nil
}

// exploreConfig is the designs' sales at their preset, checked, and the space of their
// kind.
func (c *common) exploreConfig(locks, queues []string, only string, infra bool) (explore.Config, error) {
	if len(locks) == 0 && len(queues) == 0 {
		// The designs of the files and adapters given, as run takes one alone.
		for _, l := range c.designs.Locks() {
			locks = append(locks, l.Name)
		}
		if len(locks) == 0 {
			for _, q := range c.designs.Queues() {
				queues = append(queues, q.Name)
			}
		}
	}
	var cfg explore.Config
	switch {
	case len(locks) > 0 && len(queues) > 0:
		return cfg, errors.New("explore: --lock and --queue exclude each other: designs compared must sell alike")
	case len(locks)+len(queues) == 0:
		return cfg, fmt.Errorf("explore: name a design with --lock or --queue (locks: %s; queues: %s)", joinNames(c.designs.LockNames()), joinNames(c.designs.QueueNames()))
	}
	p := catalog.Plan{Locks: locks, Scenarios: []string{"fault-sale"}, Faults: []string{faults.None}}
	kind := results.LockSale
	if len(queues) > 0 {
		p = catalog.Plan{Queues: queues, QueueScenarios: []string{"queue-sale"}, QueueFaults: []string{faults.None}, Fulfils: []string{"naive"}}
		kind = results.QueueSale
	}
	jobs, err := c.jobs(p, &saleFlags{seed: 1})
	if err != nil {
		return cfg, err
	}
	for _, j := range jobs {
		cfg.Designs = append(cfg.Designs, *c.sale(j))
	}
	if only == faults.None { // timings and loads alone
		cfg.Space = explore.NewSpace(kind, infra, nil)
		cfg.Space.Faults = nil
		return cfg, nil
	}
	var kinds []faults.Kind
	for _, k := range splitList(only) {
		if _, ok := faults.Lookup(faults.Kind(k)); !ok {
			return cfg, fmt.Errorf("explore: --faults: unknown fault %q (known: %s)", k, explore.AllFaults())
		}
		kinds = append(kinds, faults.Kind(k))
	}
	cfg.Space = explore.NewSpace(kind, infra, kinds)
	if len(kinds) > 0 && len(cfg.Space.Faults) == 0 {
		return cfg, fmt.Errorf("explore: --faults: none of %s applies to %s sales", only, kind)
	}
	return cfg, nil
}

func designNames(ds []results.Sale) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Design
	}
	return out
}

// writeExplore writes the exploration's directory (explore.md, explore.json, and each
// finding's example reruns as results.json with their report and timelines), prints
// the differences and the findings, and returns the exit code: 1 for a design
// significantly worse than the first, or, exploring one, for a finding its design does
// not document; 130 when interrupted. judge, when set (a run file's thresholds),
// judges the reruns instead, each example carrying every rerun's draw for the rates.
func (c *common) writeExplore(ctx context.Context, rep *explore.Report, e *bench.Env, args []string, judge bench.Afterword, stdout, stderr io.Writer) int {
	id := results.NewID()
	out := results.NewOutput(c.out, id)
	file := bench.NewFile(args, id, e.Shared.Info.Record())
	file.Plots, file.StartedAt, file.FinishedAt, file.Complete = string(*c.plots), rep.Started, time.Now().UTC(), rep.Complete
	if !rep.Complete {
		file.Incomplete = "interrupted: what was found until then"
	}
	code, why := bench.ExitOK, "no design is significantly worse than the first"
	if len(rep.Designs) == 1 {
		why = "every finding is one its design documents"
	}
	for _, f := range rep.Findings {
		for _, r := range f.Rates {
			if r.Example == nil {
				continue
			}
			ex := *r.Example
			ex.Draws = &r.Draws
			file.Runs = append(file.Runs, ex)
			if st, _ := c.policy.Stand(r.Example); st.Fails() && len(rep.Designs) == 1 {
				code, why = bench.ExitFailed, fmt.Sprintf("%s, %s: %s, which %s does not document", explore.Under(f.Faults), f.Timing, r.Example.Verdict.Cell(), r.Design)
			}
		}
	}
	if d := rep.Differences(); len(d) > 0 {
		code, why = bench.ExitFailed, fmt.Sprintf("%d significant difference(s) between the designs", len(d))
	}
	var verdict []string
	if judge != nil {
		verdict, code = judge(file)
		why = "the thresholds on the findings' reruns"
	}
	rep.Redis = file.Target
	// A record of no run is none: explore.json alone says what ran.
	mkdir := func() error { return os.MkdirAll(out.Dir, 0o755) }
	if len(file.Runs) > 0 {
		mkdir = func() error { return out.Progress(file) }
	}
	if err := mkdir(); err != nil {
		return bench.Complain(stderr, fmt.Errorf("explore: %w", err))
	}
	shell := func(s results.Sale) string { return bench.ShellLine(s.Args()) }
	var md strings.Builder
	rep.WriteMarkdown(&md, shell)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = errors.Join(os.WriteFile(filepath.Join(out.Dir, "explore.md"), []byte(md.String()), 0o644),
			os.WriteFile(filepath.Join(out.Dir, "explore.json"), js, 0o644))
	}
	if err == nil && len(file.Runs) > 0 {
		err = report.Write(context.WithoutCancel(ctx), out, file)
	}
	if err != nil {
		return bench.Complain(stderr, fmt.Errorf("explore: write %s: %w", out.Dir, err))
	}
	printExplore(stdout, rep, shell)
	fmt.Fprintf(stdout, "\nresults: %s (explore.md", out.Dir)
	if len(file.Runs) > 0 {
		fmt.Fprint(stdout, ", report.html with each finding's timeline")
	}
	fmt.Fprintln(stdout, ")")
	for _, l := range verdict {
		fmt.Fprintln(stdout, l)
	}
	if !rep.Complete {
		code, why = bench.ExitInterrupted, "interrupted; what was found is written"
	}
	fmt.Fprintf(stdout, "exit %d: %s\n", code, why)
	return code
}

// printExplore prints what an exploration found: the differences first.
func printExplore(w io.Writer, rep *explore.Report, shell func(results.Sale) string) {
	fmt.Fprintf(w, "\nexplored %s: %d draws, %d sales in %s (%.1f a minute), findings in %d regions\n",
		strings.Join(rep.Designs, " against "), rep.Draws, rep.Sales, rep.Elapsed.Round(time.Second), rep.SalesPerMinute, len(rep.Findings))
	for _, d := range rep.Differences() {
		fmt.Fprintln(w, "DIFFERENCE", d)
	}
	for _, f := range rep.Findings {
		if !slices.ContainsFunc(f.Rates, func(r explore.Rate) bool { return r.Runs > 0 }) {
			fmt.Fprintf(w, "%s, %s: %s; not measured (the budget ended first)\n", explore.Under(f.Faults), f.Timing, strings.Join(f.Kinds(), ", "))
			continue
		}
		var kinds []string
		for _, k := range f.Kinds() {
			var rates []string
			for _, r := range f.Rates {
				if r.Runs == 0 {
					rates = append(rates, r.Design+" no rerun finished")
					continue
				}
				rates = append(rates, fmt.Sprintf("%s %d/%d", r.Design, r.Shown[k], r.Runs))
			}
			kinds = append(kinds, k+" "+strings.Join(rates, " vs "))
		}
		fmt.Fprintf(w, "%s, %s: %s\n  smallest: stockbench %s\n", explore.Under(f.Faults), f.Timing, strings.Join(kinds, "; "), shell(f.Smallest))
	}
	if q := rep.NeverStruck(); len(q) > 0 {
		fmt.Fprintf(w, "never struck: %s\n", strings.Join(slices.Clip(q), ", "))
	}
}
