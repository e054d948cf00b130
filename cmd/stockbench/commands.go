package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// runCommand is `stockbench run`: one preset with one lock or queue, under one fault plan.
func runCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, jobs, help, err := runJobs(args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if c.shard.Sharded() {
		if c.dashboard != "" {
			return bench.Complain(stderr, bench.UsageError(errors.New("--dashboard watches a whole run, not one shard of it")))
		}
		return c.runShard(ctx, jobs[0], args, stdout, stderr)
	}
	return bench.Execute(ctx, c.options(args, nil), jobs, stdout, stderr).Tell(stdout)
}

// runJobs reads run's command line into the job it names, checked; help is set when
// help was asked for and printed.
func runJobs(args []string, stdout io.Writer) (c *common, jobs []bench.Job, help bool, err error) {
	fs := newFlagSet("run", "run (--lock NAME | --queue NAME) [--scenario NAME] [--fault PLAN] [flags]")
	c = new(common)
	sf := c.bindSales(fs)
	lock := fs.String("lock", "", "lock implementation (stockbench list names them)")
	queue := fs.String("queue", "", "queue implementation (stockbench list names them)")
	scenario := fs.String("scenario", "", "preset whose settings the other flags override (default flash-sale, or queue-sale with --queue)")
	fault := fs.String("fault", faults.None, "what goes wrong: a fault, or several joined by +, as client-pause or redis-pause:for=3s+net-latency")
	fulfil := fs.String("fulfil", string(scenarios.Naive), "how workers apply an order: naive or idempotent")
	shard := fs.String("shard", "", "run shard `i/n` of a sale too big for one load generator: every n-th buyer from buyer i, started with the other shards' at one moment on the shared --redis-url; writes a partial record for stockbench merge (env: JOB_COMPLETION_INDEX, or a swarm job's STOCKBENCH_SHARD_SLOT, with STOCKBENCH_SHARDS=n)")
	shardWait := fs.Duration("shard-wait", scenarios.DefaultJoin, "with --shard: how long a shard waits for the others to arrive, and the first for them to finish (env STOCKBENCH_SHARD_WAIT)")
	fs.StringVar(&c.runID, "run-id", os.Getenv("STOCKBENCH_RUN_ID"), "with --shard: the sharded run's `name`, the same for every shard (env STOCKBENCH_RUN_ID; default: one made from the sale's settings)")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return nil, nil, help, err
	}
	if c.shard, err = bench.ShardOf(*shard); err != nil {
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: --shard: %w", err))
	}
	if c.shard.Join, err = bench.ShardWait(*shardWait, given(fs, "shard-wait")); err != nil {
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: %w", err))
	}
	if *lock == "" && *queue == "" {
		// One design file and nothing else named: run that design.
		switch l, q := c.designs.Locks(), c.designs.Queues(); {
		case len(l) == 1 && len(q) == 0:
			*lock = l[0].Name
		case len(q) == 1 && len(l) == 0:
			*queue = q[0].Name
		}
	}
	var p bench.Plan
	switch {
	case *lock != "" && *queue != "":
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: --lock and --queue exclude each other"))
	case *lock != "":
		name := cmp.Or(*scenario, "flash-sale")
		if preset, err := scenarios.Lookup(name); err == nil && !given(fs, "fault") && len(preset.Faults) > 0 {
			*fault = preset.Faults.String() // the preset's own, as the headline's pause rate
		}
		p = bench.Plan{Locks: []string{*lock}, Scenarios: []string{name}, Faults: []string{*fault}}
	case *queue != "":
		p = bench.Plan{Queues: []string{*queue}, QueueScenarios: []string{cmp.Or(*scenario, "queue-sale")}, QueueFaults: []string{*fault},
			Fulfils: []string{*fulfil}}
	default:
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: --lock or --queue is required (locks: %s; queues: %s)",
			catalog.Join(c.designs.LockNames()), catalog.Join(c.designs.QueueNames())))
	}
	if jobs, err = c.jobs(p, sf); err != nil || !c.shard.Sharded() {
		return c, jobs, false, err
	}
	return c, jobs, false, c.shardJob(jobs, args)
}

// matrixCommand is `stockbench matrix`: every named lock under every named fault plan on
// every named preset, then every named queue likewise.
func matrixCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("matrix", "matrix [--locks a,b] [--faults x,y] [--queues q] [--queue-faults z] [flags]")
	c := common{parallel: defaultParallel, sideBySide: true}
	if v := os.Getenv("STOCKBENCH_PARALLEL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("matrix: STOCKBENCH_PARALLEL must be a number of at least 1, got %q", v)))
		}
		c.parallel = n
	}
	sf := c.bindSales(fs)
	locks := fs.String("locks", catalog.Join(lockimpl.Names()), "comma-separated lock implementations, built-in or from --lock-file (default: every one; empty: none)")
	faultList := fs.String("faults", catalog.Join(catalog.DefaultPlans(faults.Locks)), "comma-separated fault plans for the locks")
	scens := fs.String("scenarios", catalog.Join(scenarios.DefaultMatrix), "comma-separated lock presets")
	queues := fs.String("queues", catalog.Join(queueimpl.Names()), "comma-separated queue implementations, built-in or from --queue-file (default: every one; empty: none)")
	queueFaults := fs.String("queue-faults", catalog.Join(catalog.DefaultPlans(faults.Queues)), "comma-separated fault plans for the queues")
	queueScens := fs.String("queue-scenarios", catalog.Join(scenarios.DefaultQueueMatrix), "comma-separated queue presets")
	fulfils := fs.String("fulfils", catalog.Join(catalog.Words(scenarios.Fulfils)), "comma-separated queue fulfils")
	infra := fs.Bool("infra", false, "run the real-infrastructure matrix instead: each design on a Sentinel group of containers (master killed; master cut off, a split brain) and under restarts that keep data (persist=rdb, aof-everysec, aof-always); --faults and --queue-faults given still win")
	headline := fs.String("headline", "", "comma-separated lock designs to run the headline preset with, under its own faults, after the matrix; default: "+catalog.Join(scenarios.Headline)+" (make bench runs those)")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	if c.parallel < 1 {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("matrix: --parallel must be at least 1, got %d", c.parallel)))
	}
	if *infra {
		*faultList, *queueFaults = defaultTo(fs, "faults", *faultList, catalog.InfraPlans(faults.Locks)), defaultTo(fs, "queue-faults", *queueFaults, catalog.InfraPlans(faults.Queues))
	}
	// The designs read from files join the default lists, as built-in ones.
	*locks, *queues = defaultTo(fs, "locks", *locks, c.designs.LockNames()), defaultTo(fs, "queues", *queues, c.designs.QueueNames())
	jobs, err := c.jobs(bench.Plan{
		Locks: catalog.Split(*locks), Scenarios: catalog.Split(*scens), Faults: catalog.Split(*faultList),
		Queues: catalog.Split(*queues), QueueScenarios: catalog.Split(*queueScens), QueueFaults: catalog.Split(*queueFaults),
		Fulfils: catalog.Split(*fulfils), Headline: catalog.Split(*headline),
	}, sf)
	if err != nil {
		return bench.Complain(stderr, err)
	}
	return bench.Execute(ctx, c.options(args, nil), jobs, stdout, stderr).Tell(stdout)
}

// defaultParallel is how many fault sales a matrix runs side by side (STOCKBENCH_PARALLEL
// changes it): on two CPUs, four kept the verdicts of a serial run and took it from 2 min
// 42 s to 1 min 19 s (most fault sales sleep through their faults); eight took no less.
const defaultParallel = 4

// jobs are the jobs of p with the sale's flags written over its presets (bench.Plan.Jobs),
// their notes kept for the run to print.
func (c *common) jobs(p bench.Plan, sf *saleFlags) ([]bench.Job, error) {
	jobs, notes, err := p.Jobs(&c.designs, sf.overrides(c.external()))
	c.notes = append(c.notes, notes...)
	return jobs, err
}

// defaultTo is v, flag name's value, unless the flag was not given: then def.
func defaultTo(fs *flag.FlagSet, name, v string, def []string) string {
	if given(fs, name) {
		return v
	}
	return catalog.Join(def)
}

// given reports whether flag name was on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
