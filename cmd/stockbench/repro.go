package main

import (
	"context"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/repro"
)

// reproCommand is `stockbench repro [NAME...]`: without a name, the track record; with
// names (or --all), repro.Run.
func reproCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("repro", "repro [NAME...] [--all [--quick]] [--out DIR] [--redis MODE]")
	cfg := repro.Config{Args: append([]string{"repro"}, args...), Read: readRunLine}
	fs.BoolVar(&cfg.All, "all", false, "every bug of the record")
	fs.BoolVar(&cfg.Quick, "quick", false, "with --all, leave out the bugs whose sale takes minutes")
	fs.StringVar(&cfg.Out, "out", "results/runs", "directory that receives the run directories")
	fs.StringVar(&cfg.Mode, "redis", "", "where Redis comes from, its `mode`, as run takes it (default auto)")
	fs.StringVar(&cfg.JUnit, "junit", "", "also write each bug's sale as a JUnit test case to `file`, failed when it did not show what the record says")
	names, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if cfg.Names = names; len(names) == 0 && !cfg.All {
		repro.List(stdout, columns)
		return bench.Exit(stdout, bench.ExitOK, "the track record listed; name a bug, or --all, to reproduce it")
	}
	return repro.Run(ctx, cfg, stdout, stderr)
}

// readRunLine reads a run command line into its options and jobs (repro.Reader).
func readRunLine(args []string) (bench.Options, []bench.Job, error) {
	c, jobs, _, err := runJobs(args, io.Discard)
	if err != nil {
		return bench.Options{}, nil, err
	}
	return c.options(append([]string{"run"}, args...), nil), jobs, nil
}
