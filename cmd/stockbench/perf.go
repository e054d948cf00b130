package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/perf"
	"github.com/stockbench/stockbench/lockimpl"
)

// perfCommand is `stockbench perf`: perf.Run on a server of its own.
func perfCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("perf", "perf [--sales N] [--conns C] [--rss-buyers N,...]")
	var c common
	c.bind(fs)
	cfg := perf.Defaults
	fs.IntVar(&cfg.Sales, "sales", cfg.Sales, "units the lua sale and redis-benchmark each sell (one buyer per unit)")
	fs.IntVar(&cfg.Conns, "conns", cfg.Conns, "connections, for both")
	rss := fs.String("rss-buyers", "200000,1000000", "buyers of the waiting runs whose peak RSS is measured, comma-separated (0: skip them)")
	fs.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds of (lua sale, redis-benchmark); each side's median is compared")
	fs.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the lua sales (not of redis-benchmark) to this file")
	fs.BoolVar(&cfg.Adapters, "adapters", cfg.Adapters, "also run each shipped lock adapter and its Go counterpart on the flash-sale preset (from within the checkout)")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	cfg.RSSBuyers = nil
	for _, part := range catalog.Split(*rss) {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("perf: --rss-buyers: %q is not a number of buyers", part)))
		}
		if n > 0 {
			cfg.RSSBuyers = append(cfg.RSSBuyers, n)
		}
	}
	if err := cfg.Validate(); err != nil {
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
	lock := fs.String("lock", "lua", "the lock design the sale runs through")
	fs.IntVar(&z.Buyers, "buyers", 0, "buyers in the whole sale (required)")
	fs.Int64Var(&z.Stock, "stock", 500, "units for sale")
	fs.Float64Var(&z.Rate, "rate", 0, "buyers arriving per second (required: a plan sizes an open-load sale)")
	fs.Float64Var(&z.ShardCPUs, "shard-cpus", 2, "CPUs one shard gets (deploy/k8s/shards-job.yaml requests 2)")
	fs.StringVar(&z.ShardMemory, "shard-memory", "2GiB", "memory one shard may hold (deploy/k8s/shards-job.yaml's limit)")
	fs.IntVar(&z.Calibrate, "calibrate", 20000, "buyers of the sale run here to measure the per-buyer costs")
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
