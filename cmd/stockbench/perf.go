package main

import (
	"context"
	"fmt"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/perf"
	"github.com/stockbench/stockbench/lockimpl"
)

// perfCommand is `stockbench perf`: perf.Run on a server of its own.
func perfCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("perf", "perf [--sales N] [--conns C] [--rss-buyers N,...]")
	var c common
	c.bind(fs)
	cfg := perf.Defaults
	check := cfg.Bind(fs)
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	if err := check(); err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	bench.LimitMemory(cfg.Sales) // as run and matrix do
	return onServer(ctx, &c, stdout, stderr, "the measurements printed", func(e *bench.Env) error { return perf.Run(ctx, e, cfg, stdout, stderr) })
}

// planCommand is `stockbench plan --buyers N --rate R`: perf.Capacity on a server of its
// own.
func planCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", "plan --buyers N --rate R [--lock NAME] [--stock N] [--shard-cpus C] [--shard-memory SIZE]")
	var c common
	c.bind(fs)
	var z perf.Sizing
	lock := z.Bind(fs)
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	impl, err := lockimpl.Lookup(*lock)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("plan: %w", err)))
	}
	z.Impl = impl
	if err := z.Check(); err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	return onServer(ctx, &c, stdout, stderr, "the plan printed", func(e *bench.Env) error { return perf.Capacity(ctx, e, z, stdout, stderr) })
}

// onServer starts the servers c names, runs fn on them and stops them; done is what
// its exit line says when fn did it.
func onServer(ctx context.Context, c *common, stdout, stderr io.Writer, done string, fn func(*bench.Env) error) int {
	e, code := bench.Start(ctx, c.options(nil, nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)
	if err := fn(e); err != nil {
		return bench.Complain(stderr, err)
	}
	return bench.Exit(stdout, bench.ExitOK, done)
}
