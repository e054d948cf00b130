// Package perf measures what the harness costs: the driver's sales/s beside
// redis-benchmark running the same script, each shipped lock adapter beside its Go
// counterpart, the peak RSS of buyers waiting on a lock, and, from per-buyer costs
// measured here, the shards and the Redis a sale needs (Capacity).
package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/host"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// Config is what a perf run measures; Defaults is the command's.
type Config struct {
	// Sales is the units the lua sale and redis-benchmark each sell, one buyer per unit;
	// Conns the connections of both.
	Sales, Conns int
	// Rounds is how many rounds of (lua sale, redis-benchmark) run; each side's median
	// is compared.
	Rounds int
	// RSSBuyers are the buyers of the waiting runs whose peak RSS is measured; none skips
	// them.
	RSSBuyers []int
	// CPUProfile, when set, is a file that receives a CPU profile of the lua sales.
	CPUProfile string
	// Adapters runs each shipped lock adapter beside its Go counterpart (from within the
	// checkout).
	Adapters bool
	// Purchase are the designs whose purchase, one buyer at a time (PurchaseBuyers at
	// PurchaseRate a second, no think), is set beside the round trips of its own
	// commands; none skips it.
	Purchase       []string
	PurchaseBuyers int
	PurchaseRate   float64
	// Benchmark is the redis-benchmark binary (default: the one on PATH).
	Benchmark string
	// Stockbench is the stockbench binary the waiting runs are (default: this program,
	// which must then be stockbench).
	Stockbench string
}

// Defaults is what make perf measures: 200,000 units on 64 connections, three rounds,
// the purchase of none, lua and token at 200 buyers a second (2,000 of them), the
// shipped adapters, and the peak RSS of 200,000 and of 1,000,000 waiting buyers.
var Defaults = Config{Sales: 200000, Conns: 64, Rounds: 3, RSSBuyers: []int{200000, 1000000}, Adapters: true,
	Purchase: []string{"none", "lua", "token"}, PurchaseBuyers: 2000, PurchaseRate: 200}

// Validate says what is wrong with c before anything starts, and fills in the binaries
// it runs.
func (c *Config) Validate() error {
	if c.Sales <= 0 || c.Conns <= 0 || c.Rounds <= 0 {
		return errors.New("perf: --sales, --conns and --rounds must be positive")
	}
	for _, name := range c.Purchase {
		if _, err := lockimpl.Lookup(name); err != nil {
			return fmt.Errorf("perf: --purchase: %w", err)
		}
	}
	if len(c.Purchase) > 0 && (c.PurchaseBuyers <= 0 || c.PurchaseRate <= 0) {
		return errors.New("perf: --purchase-buyers and --purchase-rate must be positive")
	}
	for _, n := range c.RSSBuyers {
		if n <= 0 {
			return fmt.Errorf("perf: --rss-buyers: %d is not a number of buyers", n)
		}
	}
	if c.Benchmark == "" {
		bin, err := exec.LookPath("redis-benchmark")
		if err != nil {
			return errors.New("perf: redis-benchmark is not on PATH (apt-get install redis-tools)")
		}
		c.Benchmark = bin
	}
	if c.Stockbench == "" {
		self, err := os.Executable()
		if err != nil {
			return fmt.Errorf("perf: %w", err)
		}
		c.Stockbench = self
	}
	return nil
}

// Run measures what c names on e's shared server, printing the figures to stdout and
// each round to stderr. It sells through the lua design and then has redis-benchmark
// run the same script with the same connections against the same server, back to
// back, and prints their ratio; then it runs the rush preset (200,000 buyers waiting on
// a lock, then a million) in a child process and prints its peak RSS against the
// brief's targets.
func Run(ctx context.Context, e *bench.Env, c Config, stdout, stderr io.Writer) error {
	if err := c.Validate(); err != nil {
		return err
	}
	// Rounds alternate the two, so that a noisy neighbour on a shared machine weighs on
	// both sides alike.
	var oursAll, theirsAll []float64
	for r := range c.Rounds {
		ours, err := perfSale(ctx, e, c.Sales, c.Conns, c.CPUProfile)
		if err != nil {
			return err
		}
		theirs, err := perfRedisBenchmark(ctx, e, c.Benchmark, c.Sales, c.Conns)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "stockbench: perf round %d: lua scenario %.0f sales/s, redis-benchmark %.0f requests/s\n", r+1, ours, theirs)
		oursAll, theirsAll = append(oursAll, ours), append(theirsAll, theirs)
	}
	ours, theirs := median(oursAll), median(theirsAll)
	fmt.Fprintf(stdout, "lua scenario:     %8.0f sales/s (median of %d; %d buyers, stock %d, %d connections, buyers on %d of %d CPUs)\n",
		ours, c.Rounds, c.Sales, c.Sales, c.Conns, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(stdout, "redis-benchmark:  %8.0f requests/s (median of %d; the same script, -c %d -n %d)\n", theirs, c.Rounds, c.Conns, c.Sales)
	ratio := ours / theirs
	fmt.Fprintf(stdout, "ratio:            %8.2f (target 0.90: %s)\n", ratio, met(ratio >= 0.9))
	if err := perfPurchases(ctx, e, c, stdout, stderr); err != nil {
		return err
	}
	if c.Adapters {
		if err := perfAdapters(ctx, e, c.Rounds, stdout, stderr); err != nil {
			return err
		}
	}
	for _, n := range c.RSSBuyers {
		rss, took, err := perfRSS(ctx, e, c.Stockbench, n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "waiting buyers:   %8d buyers of the rush preset on set-nx-ex, %s\n", n, took.Round(time.Second))
		if target := rssTarget(n); target > 0 {
			fmt.Fprintf(stdout, "peak RSS:         %8.0f MiB (target %d MiB: %s)\n", float64(rss)/(1<<20), target>>20, met(rss <= target))
		} else {
			fmt.Fprintf(stdout, "peak RSS:         %8.0f MiB (no target for this many)\n", float64(rss)/(1<<20))
		}
	}
	return nil
}

// adapterPairs are the shipped lock adapters beside the Go design that runs the same
// algorithm, whose speed each must reach half of (perfAdapters).
var adapterPairs = []struct{ name, command, counterpart string }{
	{"redis-py", "/usr/bin/python3 adapters/python/redis_py_lock.py", "token"},
	{"seed-lock", "php adapters/php/seed-lock.php", "seed-setnx"},
	{"node-lock", "node adapters/node/set-nx-px-lock.js", "token"},
}

// perfAdapters runs each shipped lock adapter and its Go counterpart on the flash-sale
// preset, rounds times alternately, and prints their median sales/s, their ratio against
// the target of 0.5 and their verdict classes, which must be the same; and the Go design
// served as the adapter's pool serves, for the like-for-like ratio. An adapter whose
// interpreter is not installed, or lacks the adapter's library, is said to be skipped,
// with what to install.
func perfAdapters(ctx context.Context, e *bench.Env, rounds int, stdout, stderr io.Writer) error {
	preset, err := scenarios.Lookup("flash-sale")
	if err != nil {
		return err
	}
	root, err := host.Checkout()
	if err != nil {
		return fmt.Errorf("perf: %w (or pass --adapters=false)", err)
	}
	for _, pair := range adapterPairs {
		argv := strings.Fields(pair.command)
		if _, err := exec.LookPath(argv[0]); err != nil {
			fmt.Fprintf(stdout, "adapter %-10s skipped: %s is not installed (make adapters)\n", pair.name, argv[0])
			continue
		}
		argv[1] = filepath.Join(root, argv[1])
		pair.command = strings.Join(argv, " ")
		// An interpreter without the adapter's library refuses hello, saying what to install.
		if err := probeAdapter(ctx, e, pair.name, pair.command); err != nil {
			fmt.Fprintf(stdout, "adapter %-10s skipped: %s\n", pair.name, bench.OneLine(err.Error()))
			continue
		}
		ours, err := lockimpl.Lookup(pair.counterpart)
		if err != nil {
			return err
		}
		// The adapter's pool serves the preset's connections' worth of buyers at once; the
		// Go design runs as the preset runs it, every buyer polling, and then served as
		// the adapter is, for the like-for-like figure.
		served := preset
		served.Serve = preset.WithDefaults().Conns
		sides := []struct {
			impl lockimpl.Impl
			sale scenarios.FlashSale
		}{{adapter.Lock(adapter.Config{Name: pair.name, Command: pair.command}, false), preset}, {ours, preset}, {ours, served}}
		rates := make([][]float64, len(sides))
		classes := make([][]oracle.Class, len(sides)) // every class each earned, in order of severity
		for r := range rounds {
			for i, side := range sides {
				run, err := perfFlashSale(ctx, e, side.sale, side.impl)
				if err != nil {
					return err
				}
				rates[i] = append(rates[i], run.SalesPerSec)
				if c := run.Oracle.Class(); !slices.Contains(classes[i], c) {
					classes[i] = append(classes[i], c)
					slices.SortFunc(classes[i], func(a, b oracle.Class) int { x, _ := a.Rank(); y, _ := b.Rank(); return x - y })
				}
			}
			fmt.Fprintf(stderr, "stockbench: perf round %d: %s %.0f sales/s, %s %.0f sales/s, served %.0f\n",
				r+1, pair.name, rates[0][r], pair.counterpart, rates[1][r], rates[2][r])
		}
		a, g, gs := median(rates[0]), median(rates[1]), median(rates[2])
		fmt.Fprintf(stdout, "adapter %-10s %8.0f sales/s, %s (flash-sale preset, a pool of %d processes, median of %d)\n",
			pair.name, a, joinClasses(classes[0]), served.Serve, rounds)
		fmt.Fprintf(stdout, "  beside %-10s %7.0f sales/s, %s, as the preset runs it (every buyer polling)\n", pair.counterpart, g, joinClasses(classes[1]))
		fmt.Fprintf(stdout, "  and served      %7.0f sales/s, %s (--serve %d, as the adapter's pool)\n", gs, joinClasses(classes[2]), served.Serve)
		fmt.Fprintf(stdout, "ratio:            %8.2f against the preset (target 0.50 and the same class: %s); %.2f like for like\n",
			a/g, met(a/g >= 0.5 && slices.Equal(classes[0], classes[1])), a/gs)
	}
	return nil
}

// probeAdapter starts one process of the lock adapter and says hello to it on the shared
// server, as a run does before its first sale.
func probeAdapter(ctx context.Context, e *bench.Env, name, command string) error {
	c := e.Shared.Client(1)
	defer c.Close()
	_, err := adapter.Probe(ctx, adapter.Config{Name: name, Command: command}, c)
	return err
}

func joinClasses(cs []oracle.Class) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, "/")
}

// perfFlashSale runs one sale of impl on the shared server, its buyers on a client of
// the sale's connections.
func perfFlashSale(ctx context.Context, e *bench.Env, s scenarios.FlashSale, impl lockimpl.Impl) (results.Run, error) {
	s.Name, s.Prefix = "perf-"+impl.Name, "{stockbench-perf}"
	client := e.Shared.Client(s.WithDefaults().Conns)
	defer client.Close()
	run, err := s.Run(ctx, scenarios.Single(client), impl)
	if err != nil {
		return run, fmt.Errorf("perf: %s on the flash-sale preset: %w", impl.Name, err)
	}
	return run, nil
}

// rssTarget is the brief's peak RSS for n lock buyers waiting at once: 300 MB for
// 200,000, 1 GiB for a million; 0 past that.
func rssTarget(n int) int64 {
	switch {
	case n <= 200000:
		return 300 << 20
	case n <= 1000000:
		return 1 << 30
	}
	return 0
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// perfSale is the lua design's sales/s: every buyer buys, all start at once. With a
// profile named, the sale is profiled into it (the last round's profile is kept).
func perfSale(ctx context.Context, e *bench.Env, n, conns int, profile string) (float64, error) {
	impl, err := lockimpl.Lookup("lua")
	if err != nil {
		return 0, err
	}
	if profile != "" {
		stop, err := bench.CPUProfile(profile)
		if err != nil {
			return 0, fmt.Errorf("perf: %w", err)
		}
		defer stop()
	}
	s := scenarios.FlashSale{Sale: scenarios.Sale{Name: "perf", Buyers: n, Stock: int64(n), Conns: conns, Prefix: "{stockbench-perf}"}}
	client := e.Shared.Client(conns)
	defer client.Close()
	run, err := s.Run(ctx, scenarios.Single(client), impl)
	if err != nil {
		return 0, fmt.Errorf("perf: lua sale: %w", err)
	}
	if run.Oracle.Bought != n {
		return 0, fmt.Errorf("perf: the lua sale sold %d of %d: %s", run.Oracle.Bought, n, run.Verdict)
	}
	return run.SalesPerSec, nil
}

var rpsLine = regexp.MustCompile(`([0-9.]+) requests per second`)

// perfRedisBenchmark has redis-benchmark run the purchase script n times on conns
// connections, each call selling one unit to a random buyer, and returns its rate.
func perfRedisBenchmark(ctx context.Context, e *bench.Env, bin string, n, conns int) (float64, error) {
	c := e.Shared.Client(1)
	defer c.Close()
	stock := lockimpl.NewStock("{stockbench-perf}")
	sha, err := c.ScriptLoad(ctx, lockimpl.PurchaseScript()).Result()
	if err != nil {
		return 0, fmt.Errorf("perf: script load: %w", err)
	}
	if err := c.Set(ctx, stock.Key, n, 0).Err(); err != nil {
		return 0, fmt.Errorf("perf: set stock: %w", err)
	}
	defer c.Del(context.WithoutCancel(ctx), stock.Keys()...)
	host, port, err := net.SplitHostPort(e.Shared.Addr())
	if err != nil {
		return 0, fmt.Errorf("perf: %w", err)
	}
	cmd := exec.CommandContext(ctx, bin, "-h", host, "-p", port, "-c", strconv.Itoa(conns), "-n", strconv.Itoa(n),
		"-r", "1000000000", "-q", "EVALSHA", sha, "2", stock.Key, stock.Orders, "__rand_int__")
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("perf: redis-benchmark: %w", err)
	}
	m := rpsLine.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("perf: redis-benchmark printed no rate: %q", out)
	}
	rps, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	left, err := c.Get(ctx, stock.Key).Int64()
	if err != nil || left != 0 {
		return 0, fmt.Errorf("perf: redis-benchmark left stock %d (%v); the script did not run as the sale's", left, err)
	}
	return rps, nil
}

// perfRSS runs the rush preset with n buyers in a child process against the same server
// and returns the child's peak RSS.
func perfRSS(ctx context.Context, e *bench.Env, self string, n int) (int64, time.Duration, error) {
	out, err := os.MkdirTemp("", "stockbench-perf-")
	if err != nil {
		return 0, 0, fmt.Errorf("perf: %w", err)
	}
	defer os.RemoveAll(out)
	cmd := exec.CommandContext(ctx, self, "run", "--scenario", "rush", "--lock", "set-nx-ex", "--buyers", strconv.Itoa(n),
		"--procs", strconv.Itoa(runtime.GOMAXPROCS(0)),
		"--redis-url", "redis://"+e.Shared.Addr(), "--out", out)
	began := time.Now()
	// Its memory is what is measured, not its verdict: so many buyers polling on one
	// CPU hold the lock past its TTL, and set-nx-ex's bare DEL breaks it (exit 1).
	if msg, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != bench.ExitFailed {
		return 0, 0, fmt.Errorf("perf: the waiting run failed: %w: %s", err, lastLine(msg))
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, errors.New("perf: this system reports no peak RSS")
	}
	return ru.Maxrss * 1024, time.Since(began), nil // Linux reports kilobytes
}

func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
