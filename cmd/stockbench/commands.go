package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/stockbench/stockbench/bench"
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
	return bench.Execute(ctx, c.options(args, nil), jobs, stdout, stderr)
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
	if c.shard, err = shardOf(*shard); err != nil {
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: --shard: %w", err))
	}
	if c.shard.Join, err = shardWaitOf(fs, *shardWait); err != nil {
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: %w", err))
	}
	if *lock == "" && *queue == "" {
		// One design file and nothing else named: run that design.
		switch l, q := c.designs.locks(), c.designs.queues(); {
		case len(l) == 1 && len(q) == 0:
			*lock = l[0].Name
		case len(q) == 1 && len(l) == 0:
			*queue = q[0].Name
		}
	}
	var p plan
	switch {
	case *lock != "" && *queue != "":
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: --lock and --queue exclude each other"))
	case *lock != "":
		name := or(*scenario, "flash-sale")
		if preset, err := scenarios.Lookup(name); err == nil && !given(fs, "fault") && len(preset.Faults) > 0 {
			*fault = preset.Faults.String() // the preset's own, as the headline's pause rate
		}
		p = plan{locks: []string{*lock}, scenarios: []string{name}, faults: []string{*fault}}
	case *queue != "":
		p = plan{queues: []string{*queue}, queueScenarios: []string{or(*scenario, "queue-sale")}, queueFaults: []string{*fault},
			fulfils: []string{*fulfil}}
	default:
		return nil, nil, false, bench.UsageError(fmt.Errorf("run: --lock or --queue is required (locks: %s; queues: %s)",
			joinNames(c.designs.lockNames()), joinNames(c.designs.queueNames())))
	}
	if jobs, err = p.jobs(sf, c); err != nil || !c.shard.Sharded() {
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
	locks := fs.String("locks", joinNames(lockimpl.Names()), "comma-separated lock implementations, built-in or from --lock-file (default: every one; empty: none)")
	faultList := fs.String("faults", plansOf(faults.Locks), "comma-separated fault plans for the locks")
	scens := fs.String("scenarios", joinNames(scenarios.DefaultMatrix), "comma-separated lock presets")
	queues := fs.String("queues", joinNames(queueimpl.Names()), "comma-separated queue implementations, built-in or from --queue-file (default: every one; empty: none)")
	queueFaults := fs.String("queue-faults", plansOf(faults.Queues), "comma-separated fault plans for the queues")
	queueScens := fs.String("queue-scenarios", joinNames(scenarios.DefaultQueueMatrix), "comma-separated queue presets")
	fulfils := fs.String("fulfils", joinNames(words(scenarios.Fulfils)), "comma-separated queue fulfils")
	infra := fs.Bool("infra", false, "run the real-infrastructure matrix instead: each design on a Sentinel group of containers (master killed; master cut off, a split brain) and under restarts that keep data (persist=rdb, aof-everysec, aof-always); --faults and --queue-faults given still win")
	headline := fs.String("headline", "", "comma-separated lock designs to run the headline preset with, under its own faults, after the matrix; default: "+joinNames(scenarios.Headline)+" (make bench runs those)")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	if c.parallel < 1 {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("matrix: --parallel must be at least 1, got %d", c.parallel)))
	}
	if *infra {
		if !given(fs, "faults") {
			*faultList = joinNames(infraPlans(faults.Locks))
		}
		if !given(fs, "queue-faults") {
			*queueFaults = joinNames(infraPlans(faults.Queues))
		}
	}
	// The designs read from files join the default lists, as built-in ones.
	if !given(fs, "locks") {
		*locks = joinNames(c.designs.lockNames())
	}
	if !given(fs, "queues") {
		*queues = joinNames(c.designs.queueNames())
	}
	p := plan{
		locks: splitList(*locks), scenarios: splitList(*scens), faults: splitList(*faultList),
		queues: splitList(*queues), queueScenarios: splitList(*queueScens), queueFaults: splitList(*queueFaults),
		fulfils: splitList(*fulfils),
	}
	names := splitList(*headline)
	if len(names) == 1 && names[0] == "default" {
		names = scenarios.Headline
	}
	var jobs []bench.Job
	if len(p.locks)+len(p.queues) > 0 || len(names) == 0 {
		var err error
		if jobs, err = p.jobs(sf, &c); err != nil {
			return bench.Complain(stderr, err)
		}
	}
	if len(names) > 0 {
		preset, _ := scenarios.Lookup("headline")
		more, err := plan{locks: names, scenarios: []string{"headline"}, faults: []string{preset.Faults.String()}}.lockJobs(sf, &c)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(err))
		}
		jobs = append(jobs, more...)
	}
	return bench.Execute(ctx, c.options(args, nil), jobs, stdout, stderr)
}

// defaultParallel is how many fault sales a matrix runs side by side (STOCKBENCH_PARALLEL
// changes it): on two CPUs, four kept the verdicts of a serial run and took it from 2 min
// 42 s to 1 min 19 s (most fault sales sleep through their faults); eight took no less.
const defaultParallel = 4

// infraPlans is the --infra matrix's fault plans for sales of a: the faults of the
// Sentinel group, then a restart in each persistence mode that keeps data.
func infraPlans(a faults.Applies) []string {
	plans := words(faults.InfraKinds(a))
	for _, p := range faults.Persistences[1:] {
		plans = append(plans, faults.Fault{Kind: faults.RedisRestart, Persist: p}.String())
	}
	return plans
}

// plansOf is the default fault plans of a matrix for sales of a: none, then each fault.
func plansOf(a faults.Applies) string {
	return joinNames(append([]string{faults.None}, words(faults.MatrixKinds(a))...))
}

// words writes a vocabulary's values as the strings the command line takes.
func words[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// plan is what a command was asked to run, by name.
type plan struct {
	locks, scenarios, faults                     []string
	queues, queueScenarios, queueFaults, fulfils []string
}

// jobs checks every name and setting before anything starts, so that bad input never
// leaves a Redis behind or a results directory without results.
func (p plan) jobs(sf *saleFlags, c *common) ([]bench.Job, error) {
	lockJobs, err := p.lockJobs(sf, c)
	if err != nil {
		return nil, bench.UsageError(err)
	}
	queueJobs, err := p.queueJobs(sf, c)
	if err != nil {
		return nil, bench.UsageError(err)
	}
	jobs := append(lockJobs, queueJobs...)
	if len(jobs) == 0 && len(c.notes) > 0 {
		return nil, bench.UsageError(errors.New(c.notes[0]))
	}
	if len(jobs) == 0 {
		return nil, bench.UsageError(fmt.Errorf("nothing to run: name at least one lock or queue, with a scenario and a fault plan"))
	}
	return jobs, nil
}

func (p plan) lockJobs(sf *saleFlags, c *common) ([]bench.Job, error) {
	impls := make([]lockimpl.Impl, len(p.locks))
	for i, l := range p.locks {
		impl, err := c.designs.lock(l)
		if err != nil {
			return nil, err
		}
		impls[i] = impl
	}
	plans, err := parsePlans(p.faults)
	if err != nil {
		return nil, err
	}
	var jobs []bench.Job
	for _, name := range p.scenarios {
		preset, err := scenarios.Lookup(name)
		if err != nil {
			return nil, err
		}
		sale := sf.flashSale(preset)
		if c.external() {
			sale.KeyLease = scenarios.DefaultKeyLease
		}
		for _, fp := range plans {
			sale.Faults = fp
			if err := sale.Validate(); err != nil {
				return nil, err
			}
			for _, impl := range impls {
				if err := fitsExternal(c, fp, impl.LockNodes(), impl.Name); err != nil {
					return nil, err
				}
				if err := cmp.Or(scenarios.Refused(impl.Name, impl.Outside, fp), sale.Takes(impl)); err != nil {
					c.notes = append(c.notes, err.Error())
					continue
				}
				jobs = append(jobs, bench.LockJob{Sale: sale, Impl: impl})
			}
		}
	}
	return jobs, nil
}

func (p plan) queueJobs(sf *saleFlags, c *common) ([]bench.Job, error) {
	impls := make([]queueimpl.Impl, len(p.queues))
	for i, name := range p.queues {
		impl, err := c.designs.queue(name)
		if err != nil {
			return nil, err
		}
		impls[i] = impl
	}
	plans, err := parsePlans(p.queueFaults)
	if err != nil {
		return nil, err
	}
	if c.external() {
		impls = slices.DeleteFunc(impls, func(impl queueimpl.Impl) bool {
			if impl.Own {
				c.notes = append(c.notes, fmt.Sprintf("queue %s left out: it writes keys of its own outside the run's prefix, so it runs only on servers the harness starts", impl.Name))
			}
			return impl.Own
		})
	}
	var jobs []bench.Job
	for _, name := range p.queueScenarios {
		preset, err := scenarios.LookupQueue(name)
		if err != nil {
			return nil, err
		}
		base := sf.queueSale(preset)
		if c.external() {
			base.KeyLease = scenarios.DefaultKeyLease
		}
		for _, f := range p.fulfils {
			for _, fp := range plans {
				sale := base
				sale.Fulfil, sale.Faults = scenarios.Fulfil(f), fp
				if err := sale.Validate(); err != nil {
					return nil, err
				}
				for _, impl := range impls {
					if err := fitsExternal(c, fp, 1, impl.Name); err != nil {
						return nil, err
					}
					if err := scenarios.Refused(impl.Name, impl.Outside, fp); err != nil {
						c.notes = append(c.notes, err.Error())
						continue
					}
					jobs = append(jobs, bench.QueueJob{Sale: sale, Impl: impl})
				}
			}
		}
	}
	return jobs, nil
}

func parsePlans(specs []string) ([]faults.Plan, error) {
	plans := make([]faults.Plan, len(specs))
	for i, spec := range specs {
		fp, err := faults.Parse(spec)
		if err != nil {
			return nil, err
		}
		plans[i] = fp
	}
	return plans, nil
}

// fitsExternal refuses, before anything starts, what the user's own Redis cannot do:
// the harness starts no servers beside it, and acts on none.
func fitsExternal(c *common, fp faults.Plan, nodes int, design string) error {
	if !c.external() {
		return nil
	}
	n := fp.Needs()
	switch {
	case n.Owned || n.SeparateStock || n.Replica:
		return fmt.Errorf("fault %s acts on Redis servers the harness starts; it cannot run with --redis-url", fp)
	case nodes > 1:
		return fmt.Errorf("%s needs %d independent Redis servers the harness starts; it cannot run with --redis-url", design, nodes)
	}
	return nil
}

func joinNames(names []string) string { return strings.Join(names, ",") }

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// given reports whether flag name was on the command line.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
