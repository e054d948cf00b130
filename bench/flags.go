package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/stockbench/stockbench/internal/target"
	"github.com/stockbench/stockbench/scenarios"
)

// common are the flags every running command takes.
type common struct {
	redis  target.Config
	out    string
	seed   uint64
	linear bool
	procs  int
}

func (c *common) bind(fs *flag.FlagSet) {
	fs.StringVar(&c.redis.Mode, "redis", envOr("STOCKBENCH_REDIS", "auto"), "where Redis comes from: auto, container, process or external (env STOCKBENCH_REDIS)")
	fs.StringVar(&c.redis.URL, "redis-url", os.Getenv("STOCKBENCH_REDIS_URL"), "your own Redis, as redis://[user:pass@]host:port[/db]; only keys under the run's prefix are touched (env STOCKBENCH_REDIS_URL)")
	fs.BoolVar(&c.redis.Cluster, "redis-cluster", false, "--redis-url is a Redis Cluster (more seeds as ?addr=host:port)")
	fs.StringVar(&c.redis.Image, "redis-image", envOr("STOCKBENCH_REDIS_IMAGE", target.DefaultImage), "image for the container target (env STOCKBENCH_REDIS_IMAGE)")
	fs.StringVar(&c.redis.Binary, "redis-server", envOr("STOCKBENCH_REDIS_SERVER", "redis-server"), "redis-server binary for the process target (env STOCKBENCH_REDIS_SERVER)")
	fs.StringVar(&c.out, "out", "results/runs", "directory that receives the run directory")
	fs.Uint64Var(&c.seed, "seed", 1, "seed for think-time draws")
	fs.BoolVar(&c.linear, "check-linearizable", false, "also check the purchases for linearizability with porcupine")
	fs.IntVar(&c.procs, "procs", 0, "CPUs the buyers' goroutines run on (GOMAXPROCS); default: all but one when Redis runs on this machine, all for --redis-url, or GOMAXPROCS from the environment")
}

// external reports whether the run is on the user's own Redis: nothing is started, and
// keys carry a lease (scenarios.DefaultKeyLease).
func (c *common) external() bool { return c.redis.URL != "" || c.redis.Mode == "external" }

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// overrides are the sale settings a user may change from a preset's.
type overrides struct {
	buyers, conns               int
	stock                       int64
	critical, think             string
	ttl, retryInterval, timeout time.Duration
	rate, rampTo                float64
	warmup                      time.Duration
}

func (o *overrides) bind(fs *flag.FlagSet) {
	fs.IntVar(&o.buyers, "buyers", 0, "number of buyers, each buying at most once")
	fs.Int64Var(&o.stock, "stock", 0, "units on sale")
	fs.StringVar(&o.critical, "critical", "", "what a lock holder does: read-think-write or atomic")
	fs.StringVar(&o.think, "think", "", "holder's work between read and write: 2ms, uniform:1ms-3ms, longtail:1ms,1500ms,0.01")
	fs.DurationVar(&o.ttl, "ttl", 0, "lock TTL (EX-based locks round up to whole seconds)")
	fs.DurationVar(&o.retryInterval, "retry-interval", 0, "sleep between a buyer's tries for the lock")
	fs.DurationVar(&o.timeout, "timeout", 0, "how long a buyer tries for the lock before giving up")
	fs.IntVar(&o.conns, "conns", 0, "connection pool size shared by all buyers")
	fs.Float64Var(&o.rate, "rate", 0, "open load: buyers (or orders) arriving per second, latency counted from each intended arrival (0: every buyer at once)")
	fs.Float64Var(&o.rampTo, "ramp-to", 0, "with --rate: the arrival rate reached by the last buyer, linearly")
	fs.DurationVar(&o.warmup, "warmup", 0, "leave buyers arriving in the first part of the sale out of the latency figures")
}

// apply sets on s the flags the user gave; set holds their names.
func (o *overrides) apply(s scenarios.FlashSale, set map[string]bool) (scenarios.FlashSale, error) {
	if set["buyers"] {
		s.Buyers = o.buyers
	}
	if set["stock"] {
		s.Stock = o.stock
	}
	if set["critical"] {
		s.Critical = scenarios.Critical(o.critical)
	}
	if set["think"] {
		t, err := scenarios.ParseThink(o.think)
		if err != nil {
			return s, err
		}
		s.Think = t
	}
	if set["ttl"] {
		s.TTL = o.ttl
	}
	if set["retry-interval"] {
		s.Retry.Interval = o.retryInterval
	}
	if set["timeout"] {
		s.Retry.Timeout = o.timeout
	}
	if set["conns"] {
		s.Conns = o.conns
	}
	if set["rate"] {
		s.Rate = o.rate
	}
	if set["ramp-to"] {
		s.RampTo = o.rampTo
	}
	if set["warmup"] {
		s.Warmup = o.warmup
	}
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"buyers", o.buyers <= 0}, {"conns", o.conns <= 0}, {"ttl", o.ttl <= 0},
		{"retry-interval", o.retryInterval <= 0}, {"timeout", o.timeout <= 0},
	} {
		if set[c.name] && c.bad {
			return s, fmt.Errorf("--%s must be positive", c.name)
		}
	}
	return s, s.Validate()
}

// parse parses args into fs and returns the names of the flags set. Help goes to stdout;
// a bad flag or any positional argument becomes one usage error.
func parse(fs *flag.FlagSet, args []string, stdout io.Writer) (set map[string]bool, help bool, err error) {
	pos, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return nil, help, err
	}
	if len(pos) > 0 {
		return nil, false, usageError(fmt.Errorf("%s: unexpected argument %q", fs.Name(), pos[0]))
	}
	set = make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set, false, nil
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
				return nil, true, nil
			}
			return nil, false, usageError(fmt.Errorf("%s: %w (see 'stockbench %s -h')", fs.Name(), err, fs.Name()))
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
	}
	return fs
}

func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// queueOverrides are the queue-sale settings a user may change from a preset's.
type queueOverrides struct {
	workers          int
	fulfil           string
	visibility, work time.Duration
}

func (q *queueOverrides) bind(fs *flag.FlagSet) {
	fs.IntVar(&q.workers, "workers", 0, "queue workers taking and fulfilling orders")
	fs.StringVar(&q.fulfil, "fulfil", "", "how workers apply an order: naive or idempotent (run only)")
	fs.DurationVar(&q.visibility, "visibility", 0, "how long a taken task stays with its worker before a re-delivering queue hands it on")
	fs.DurationVar(&q.work, "work", 0, "a worker's time on a task before fulfilling it")
}

// apply sets on s the queue flags the user gave, and --buyers, --stock and --conns.
func (q *queueOverrides) apply(s scenarios.QueueSale, set map[string]bool, o *overrides) (scenarios.QueueSale, error) {
	for _, c := range []struct {
		name string
		bad  bool
	}{
		{"workers", q.workers <= 0}, {"visibility", q.visibility <= 0}, {"work", q.work < 0}, {"rate", o.rate < 0},
	} {
		if set[c.name] && c.bad {
			return s, fmt.Errorf("--%s must be positive", c.name)
		}
	}
	if set["workers"] {
		s.Workers = q.workers
	}
	if set["visibility"] {
		s.Visibility = q.visibility
	}
	if set["work"] {
		s.Work = q.work
	}
	if set["rate"] {
		s.Rate = o.rate
	}
	if set["buyers"] {
		if o.buyers <= 0 {
			return s, fmt.Errorf("--buyers must be positive")
		}
		s.Buyers = o.buyers
	}
	if set["stock"] {
		s.Stock = o.stock
	}
	if set["conns"] {
		s.Conns = o.conns
	}
	return s, s.Validate()
}
