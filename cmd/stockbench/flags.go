package main

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/ghactions"
	"github.com/stockbench/stockbench/results/report"
	"github.com/stockbench/stockbench/scenarios"
)

// common are the flags every running command takes.
type common struct {
	redis servers.Config
	out   string
	procs int
	// parallel is how many fault sales run side by side; only matrix, which sets
	// sideBySide, takes --parallel; 1 for the others.
	parallel   int
	sideBySide bool
	// designs are the designs the command may name; run, matrix and check bind their
	// flags.
	designs catalog.Catalog
	// notes are what the command leaves out, and why, printed as it starts.
	notes []string
	// shard and runID: run's sale is one shard of a sharded run (see runShard).
	shard scenarios.Shard
	runID string
	// dashboard is where the live page and /metrics are served (bench.Options.Dashboard).
	dashboard string
	// repeat is how many times each sale with no fault runs (bench.Options.Repeat).
	repeat int
	// policy is what fails a sale over what its design documents (bench.Options.Policy).
	policy results.Policy
	// plots is which plot files the report writes (bench.Options.Plots).
	plots *report.Plots
	// runs is how many seeds each sale runs with (bench.Options.Runs).
	runs int
	// junit is where the judged sales go as JUnit XML (bench.Options.JUnit); format is
	// how the verdict is told besides the text (bench.Options.Format).
	junit  string
	format bench.Format
	// locate says where GitHub's annotations point (bench.Options.Locate): check's run
	// file.
	locate ghactions.Locator
	// verbose: explore prints a line per sale (findings.Record.Verbose).
	verbose bool
}

// bindJUnit binds --junit and --format: the run's sales as JUnit XML, and as GitHub
// Actions' annotations, for a CI system to show.
func (c *common) bindJUnit(fs *flag.FlagSet) {
	c.format = bench.FormatText
	fs.Func("format", "how the verdict is told besides the tables: text, or github (in GitHub Actions: an error annotation per failed sale, a notice per fault that never struck, and summary.md in the job's step summary) (default text)",
		func(s string) (err error) { c.format, err = bench.ParseFormat(s); return err })
	fs.StringVar(&c.junit, "junit", "", "also write the sales as JUnit XML to `file`: a test case per sale (class scenario.design, name its fault plan), failed when it did worse than documented or broke a threshold, errored when it could not finish, skipped when its fault never struck")
}

// bindRuns binds --runs: each sale run with that many seeds, for rates.
func (c *common) bindRuns(fs *flag.FlagSet) {
	c.runs = 1
	fs.Func("runs", "run each sale `n` times with seeds drawn from --seed, for each class's and finding's rate with its 95% interval (a cell reads LOST 3/10 SAFE 7/10); the record is the worst draw, whose rerun line has its seed; draws after the first run side by side (default 1)",
		func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > bench.MaxRuns {
				return fmt.Errorf("must be from 1 to %d", bench.MaxRuns)
			}
			c.runs = n
			return nil
		})
}

// plotsFlag binds --plots: which files of its plots a report writes under plots/; empty
// when not given, for def.
func plotsFlag(fs *flag.FlagSet, def string) *report.Plots {
	p := new(report.Plots)
	fs.Func("plots", "which plot files the report writes under plots/ beside report.html (which embeds every plot): png, svg, both or none (default "+def+")",
		func(s string) error {
			v, err := report.ParsePlots(s)
			*p = v
			return err
		})
	return p
}

// bindPolicy binds --fail-on and --expect, what counts as a failing sale for the exit
// status (bench.ExitRule).
func (c *common) bindPolicy(fs *flag.FlagSet) {
	fs.Func("fail-on", "fail (exit 1) on a sale that earns one of these `classes`, comma-separated, whatever its design documents (as OVERSOLD,LOST)",
		func(s string) (err error) { c.policy.FailOn, err = results.ParseClasses(s); return err })
	fs.Func("expect", "the only `classes` a sale may earn, comma-separated, in place of what its design documents: any other, worse or better, fails it (exit 1), as --expect SAFE",
		func(s string) (err error) { c.policy.Expect, err = results.ParseClasses(s); return err })
}

func (c *common) bind(fs *flag.FlagSet) {
	c.redis.Bind(fs)
	fs.StringVar(&c.out, "out", "results/runs", "directory that receives the run directory")
	if c.sideBySide {
		fs.IntVar(&c.parallel, "parallel", c.parallel, "`n` fault sales of at most 10,000 buyers run side by side, each on servers of its own; sales with no fault, whose figures are compared, run alone (1: one at a time; the user's own Redis: always one; env STOCKBENCH_PARALLEL)")
	}
	c.repeat = 1
	fs.Func("repeat", "run each sale with no fault `n` times in all, for the spread of its speed that the gate's soft rules test (make bench and make gate: 5); the first run is the record (default 1)",
		func(s string) error {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > bench.MaxRepeat {
				return fmt.Errorf("must be from 1 to %d", bench.MaxRepeat)
			}
			c.repeat = n
			return nil
		})
	fs.StringVar(&c.dashboard, "dashboard", "", "serve a live page of the run and its figures as OpenMetrics on /metrics at `host:port` (:port for this machine only, :0 for a free port); the page is saved as dashboard.html in the run directory")
	c.plots = plotsFlag(fs, string(report.DefaultPlots))
	fs.IntVar(&c.procs, "procs", 0, "CPUs the buyers' goroutines run on (GOMAXPROCS); default: all but one when Redis runs on this machine, all for --redis-url, or GOMAXPROCS from the environment")
}

// bindSales binds what every command that runs sales takes: the common flags, the
// designs' and the sale's own; it returns the sale's, for the command to apply.
func (c *common) bindSales(fs *flag.FlagSet) *saleFlags {
	c.bind(fs)
	c.bindPolicy(fs)
	c.bindRuns(fs)
	c.bindJUnit(fs)
	bindDesigns(fs, &c.designs)
	sf := new(saleFlags)
	sf.bind(fs)
	return sf
}

// options are the harness's options for a run of command line args; after, when set,
// judges the run when it ends.
func (c *common) options(args []string, after bench.Afterword) bench.Options {
	var plots string
	if c.plots != nil { // unbound by the commands that write no report
		plots = string(*c.plots)
	}
	parallel := c.parallel
	if c.runs > 1 && !c.sideBySide {
		parallel = max(parallel, defaultParallel) // a sale's draws, side by side
	}
	return bench.Options{Redis: c.redis, Out: c.out, Procs: c.procs, Parallel: parallel, Args: args, Runs: c.runs,
		Notes: c.notes, Prepare: c.designs.Check, Sale: c.sale, After: after, Dashboard: c.dashboard, Repeat: c.repeat, Policy: c.policy, Width: columns, Plots: plots, JUnit: c.junit, Format: c.format, Locate: c.locate}
}

// external reports whether the run is on the user's own Redis: nothing is started, and
// keys carry a lease (scenarios.DefaultKeyLease).
func (c *common) external() bool { return c.redis.URL != "" || c.redis.Mode == servers.KindExternal }

// provider is the Redis the flags describe, or a usage error that names the flags.
func (c *common) provider() (servers.Provider, error) {
	p, err := c.redis.Provider()
	if err != nil {
		return nil, bench.UsageError(fmt.Errorf("--redis, --redis-url: %w", err))
	}
	return p, nil
}

// saleFlags are the flags that change the sales a command runs: one binding of the
// settings' table (scenarios.Settings), shared by run, matrix, sweep and check. Each
// flag given writes its value into every sale, over its preset's; a flag not given
// leaves the preset's. The seed and the linearizability check apply to every sale.
type saleFlags struct {
	given  []results.Setting
	seed   uint64
	linear bool
}

func (f *saleFlags) bind(fs *flag.FlagSet) {
	for _, st := range scenarios.Settings {
		if !st.Flag {
			continue
		}
		fs.Func(st.Name, st.Usage, func(v string) error {
			if err := st.Check(v); err != nil {
				return err
			}
			f.given = append(f.given, results.Setting{Name: st.Name, Value: v})
			return nil
		})
	}
	fs.Uint64Var(&f.seed, "seed", 1, "seed for think-time draws")
	fs.BoolVar(&f.linear, "check-linearizable", false, "also check the purchases for linearizability with porcupine")
}

// overrides are what the flags given write over a preset, for a run on Redis external
// or not.
func (f *saleFlags) overrides(external bool) catalog.Overrides {
	return catalog.Overrides{Settings: f.given, Seed: f.seed, Linear: f.linear, External: external}
}

// parse parses args into fs. Help goes to stdout; a bad flag or any positional argument
// becomes one usage error.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (help bool, err error) {
	pos, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return help, err
	}
	if len(pos) > 0 {
		return false, bench.UsageError(fmt.Errorf("%s: unexpected argument %q", fs.Name(), pos[0]))
	}
	return false, nil
}

// parseWithArgs parses flags, which may come before or after the positional arguments,
// and returns the positional ones.
func parseWithArgs(fs *flag.FlagSet, args []string, stdout io.Writer) (pos []string, help bool, err error) {
	fs.SetOutput(io.Discard)
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				fs.SetOutput(stdout)
				fs.Usage()
				bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("the usage of %s printed; nothing ran", fs.Name()))
				return nil, true, nil
			}
			return nil, false, bench.UsageError(fmt.Errorf("%s: %w (see 'stockbench %s -h')", fs.Name(), err, fs.Name()))
		}
		if fs.NArg() == 0 {
			return pos, false, nil
		}
		pos, args = append(pos, fs.Arg(0)), fs.Args()[1:]
	}
}

func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: stockbench %s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
		if fs.Lookup("fail-on") != nil {
			fmt.Fprintf(fs.Output(), "\n%s\n", bench.ExitRule)
		}
	}
	return fs
}

func splitList(s string) []string { return catalog.Split(s) }
