package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/replay"
)

// replayCommand is `stockbench replay RUN_DIR`: replay.Replay.
func replayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", "replay RUN_DIR [--times N] [--only TEXT]")
	c := &common{sideBySide: true, parallel: defaultParallel}
	c.bind(fs)
	c.bindPolicy(fs)
	cfg := replay.Config{SaleOf: saleOf}
	fs.IntVar(&cfg.Times, "times", 1, "how many times to rerun each sale")
	fs.StringVar(&cfg.Only, "only", "", "rerun only the sales whose scenario/design/fault contains this `text`, as fault-sale/token/failover")
	dirs, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if len(dirs) != 1 {
		return bench.Complain(stderr, bench.UsageError(errors.New("replay: name one run directory (results/runs/ID)")))
	}
	cfg.Dir = dirs[0]
	return replay.Replay(ctx, c.options(append([]string{"replay"}, args...), nil), cfg, stdout, stderr)
}

// shrinkCommand is `stockbench shrink RUN_DIR`: replay.Shrink on a server of its own.
func shrinkCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("shrink", "shrink RUN_DIR [--only TEXT] [--tries N] [--budget DURATION]")
	c := &common{parallel: 1}
	c.bind(fs)
	cfg := replay.ShrinkConfig{SaleOf: saleOf, Args: append([]string{"shrink"}, args...)}
	fs.StringVar(&cfg.Only, "only", "", "shrink the first harmful sale whose scenario/design/fault contains this `text` (default: the first harmful sale)")
	fs.IntVar(&cfg.Tries, "tries", 3, "reruns of a smaller sale before it is judged not to earn the class: real Redis adds timing")
	fs.DurationVar(&cfg.Budget, "budget", 5*time.Minute, "how long the search may take")
	dirs, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	switch {
	case len(dirs) != 1:
		return bench.Complain(stderr, bench.UsageError(errors.New("shrink: name one run directory (results/runs/ID)")))
	case c.dashboard != "":
		return bench.Complain(stderr, bench.UsageError(errors.New("shrink: --dashboard watches a run; run the smallest sale shrink prints with it")))
	}
	cfg.Dir, cfg.Out, cfg.Plots = dirs[0], c.out, string(*c.plots)
	if _, _, err := cfg.Pick(); err != nil {
		return bench.Complain(stderr, err)
	}
	e, code := bench.Start(ctx, c.options(nil, nil), stderr)
	if e == nil {
		return code
	}
	defer e.Stop(stderr)
	return replay.Shrink(ctx, e, cfg, stdout, stderr)
}
