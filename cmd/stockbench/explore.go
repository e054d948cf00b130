package main

import (
	"context"
	"errors"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/bench/findings"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/junit"
)

// exploreCommand is `stockbench explore`: the sales a design can be put through,
// searched for what nobody aimed at (package explore), on one design or on several
// compared draw for draw.
func exploreCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("explore", "explore --lock A [--lock B] [--budget 10m] [--seed N] [flags]")
	c := &common{parallel: explore.DefaultParallel}
	c.bind(fs)
	fs.IntVar(&c.parallel, "parallel", c.parallel, "at most `n` sales at once, each on servers of its own: drawn sales mostly wait on their work, their faults and their TTLs, so how many run at once starts at four per CPU and follows the machine's idle CPU up to n (the user's own Redis: one)")
	c.bindPolicy(fs)
	c.bindJUnit(fs)
	bindDesigns(fs, &c.designs)
	var locks, queues []string
	fs.Func("lock", "a lock design to explore, by name (built in, or from --lock-file, --lock-exec); repeat it to compare designs draw for draw", func(s string) error { locks = append(locks, s); return nil })
	fs.Func("queue", "a queue design to explore, by name; repeatable, as --lock", func(s string) error { queues = append(queues, s); return nil })
	budget := fs.Duration("budget", explore.DefaultBudget, "how long the exploration takes in all: searching, then shrinking and measuring each finding")
	seed := fs.Uint64("seed", 1, "seed of the draws: the same seed draws the same sales for the same outcomes")
	confirm := fs.Int("confirm", explore.DefaultConfirm, "reruns of each finding's smallest sale per design, for its rate and the exact test")
	infra := fs.Bool("infra", false, "draw the faults on a Sentinel group or a Cluster too (slower: each sale starts a topology of containers)")
	verbose := fs.Bool("verbose", false, "print a line per sale, where its time went (servers, set-up, selling, judging), and how long writing the record took")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the whole exploration, this process's (not the servers' nor the adapters'), to `file`")
	only := fs.String("faults", "", "draw only these faults, comma-separated, or none for timings and loads alone (default: every fault the table has for the designs' sales: "+explore.AllFaults()+")")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	cfg, err := c.exploreConfig(locks, queues, *only, *infra)
	if err == nil {
		err = findings.Limits(*budget, *confirm, c.parallel)
	}
	if err == nil && c.dashboard != "" {
		err = errors.New("explore: --dashboard watches one run; rerun a finding's smallest sale with it")
	}
	if err == nil {
		err = bench.Writable(c.out)
	}
	if err == nil && c.junit != "" {
		err = junit.Writable(c.junit)
	}
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	cfg.Budget, cfg.Seed, cfg.Confirm, cfg.Parallel = *budget, *seed, *confirm, c.parallel
	c.verbose = *verbose
	if *profile != "" {
		stop, err := bench.CPUProfile(*profile)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(err))
		}
		defer stop()
	}
	return c.explore(ctx, cfg, append([]string{"explore"}, args...), nil, stdout, stderr).Tell(stdout)
}

// exploreConfig is findings.Designs of the designs named or, naming none, of the files
// and adapters given.
func (c *common) exploreConfig(locks, queues []string, only string, infra bool) (explore.Config, error) {
	return findings.Designs(&c.designs, locks, queues, only, infra, c.redisArgs())
}

// explore starts the servers and runs findings.Run on them; args is the command line
// that made the run, for its record, and judge, when set, judges the findings' reruns.
func (c *common) explore(ctx context.Context, cfg explore.Config, args []string, judge bench.Afterword, stdout, stderr io.Writer) bench.Ending {
	e, code := bench.Start(ctx, c.options(args, nil), stderr)
	if e == nil {
		return bench.Told(code)
	}
	defer e.Stop(stderr)
	// Once the adapters said hello (Start checks the designs), it is known whether
	// every design keeps its leases to the millisecond, and the sales can be shorter.
	cfg.Space.Fine = cfg.Space.Kind == results.LockSale && c.designs.Ms(findings.DesignNames(cfg.Designs))
	// check's exploration follows its sales, whose JUnit file it adds to.
	rec := findings.Record{Out: c.out, Plots: string(*c.plots), Args: args, Policy: c.policy, Judge: judge, JUnit: c.junit, Append: judge != nil, Format: c.format, Locate: c.locate, Verbose: c.verbose}
	return findings.Run(ctx, e, cfg, rec, stdout, stderr)
}
