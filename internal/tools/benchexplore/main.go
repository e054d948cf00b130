// Command benchexplore times one exploration on two builds in one job (make
// bench-explore BASE=ref): the base built from git, this checkout built as it is, each
// seed explored by both, back to back in an order that alternates seed by seed, and
// printed as the change's regions measured and sales a minute against the base's, with
// the machine's idle CPU beside each, so that a speed claim rests on ratios a busy or
// different machine moves alike.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/pairgate"
	"github.com/stockbench/stockbench/internal/tools/exploreproc"
)

// config is what a run compares; defaults are flags' defaults.
type config struct {
	base   string   // the base's git ref
	seeds  []uint64 // each explored by both builds
	budget time.Duration
	args   []string // the exploration's own arguments
	redis  string   // --redis for both
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	if err := compare(ctx, c, stdout, stderr); err != nil {
		return bench.Complain(stderr, err)
	}
	return bench.ExitOK
}

func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("bench-explore", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	base := fs.String("base", "", "the base build's git ref (required)")
	seeds := fs.String("seeds", "1,2,3", "the seeds, comma- or space-separated, each explored by both builds")
	budget := fs.Duration("budget", 3*time.Minute, "each exploration's budget")
	exploreArgs := fs.String("args", "--lock set-nx-ex --lock token", "the exploration's own arguments, as a shell splits them")
	redis := fs.String("redis", "process", "the Redis both builds start (--redis)")
	if err := fs.Parse(args); err != nil {
		return config{}, fmt.Errorf("bench-explore: %w", err)
	}
	c := config{base: *base, budget: *budget, redis: *redis}
	if c.base == "" {
		return c, errors.New("bench-explore: BASE=ref names the build to compare with (a commit, a tag, origin/main)")
	}
	if c.budget < 10*time.Second {
		return c, fmt.Errorf("bench-explore: a budget of %s is too short to explore (10s at least)", c.budget)
	}
	for _, s := range catalog.Split(strings.Join(strings.Fields(*seeds), ",")) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return c, fmt.Errorf("bench-explore: seed %q is not a number", s)
		}
		c.seeds = append(c.seeds, n)
	}
	if len(c.seeds) == 0 {
		return c, errors.New("bench-explore: no seed")
	}
	var err error
	if c.args, err = pairgate.Words(*exploreArgs); err != nil {
		return c, fmt.Errorf("bench-explore: the exploration's arguments: %w", err)
	}
	return c, nil
}

// trial is one exploration of one build.
type trial struct {
	build string // base or change
	seed  uint64
	exploreproc.Run
}

func compare(ctx context.Context, c config, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp("", "stockbench-bench-explore-")
	if err != nil {
		return fmt.Errorf("bench-explore: %w", err)
	}
	defer os.RemoveAll(dir)
	baseBin, commit, err := pairgate.BuildRef(ctx, "bench-explore", ".", c.base, filepath.Join(dir, "base"))
	if err != nil {
		return err
	}
	changeBin := filepath.Join(dir, "change", "stockbench")
	if out, err := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", changeBin, "./cmd/stockbench").CombinedOutput(); err != nil {
		return fmt.Errorf("bench-explore: this checkout does not build: %w: %s", err, bench.OneLine(string(out)))
	}
	fmt.Fprintf(stderr, "bench-explore: the base is %s (%s); each seed explored for %s by both, one after the other\n", c.base, commit[:12], c.budget)
	bins := map[string]string{"base": baseBin, "change": changeBin}
	var trials []trial
	for i, seed := range c.seeds {
		order := []string{"base", "change"}
		if i%2 == 1 {
			order = []string{"change", "base"}
		}
		for _, b := range order {
			t, err := explorePair(ctx, c, b, bins[b], seed, filepath.Join(dir, fmt.Sprintf("%s-%d", b, seed)), stderr)
			if err != nil {
				return err
			}
			trials = append(trials, t)
		}
	}
	write(stdout, c, commit, trials)
	return nil
}

// explorePair runs build b's exploration of seed into out.
func explorePair(ctx context.Context, c config, b, bin string, seed uint64, out string, stderr io.Writer) (trial, error) {
	args := append(slices.Clone(c.args), "--budget", c.budget.String(), "--seed", strconv.FormatUint(seed, 10), "--redis", c.redis)
	r, err := exploreproc.Explore(ctx, "bench-explore: the "+b, bin, args, out)
	if err != nil {
		return trial{}, err
	}
	t := trial{build: b, seed: seed, Run: r}
	fmt.Fprintf(stderr, "bench-explore: seed %d, %s: %d draws, %d regions, %d measured, %.1f sales a minute, in %s\n",
		seed, b, t.Report.Draws, len(t.Report.Findings), t.Measured(), t.Report.SalesPerMinute, t.Took.Round(time.Second))
	return t, nil
}

// write prints the trials' table, then the change's ratios to the base seed by seed and
// their geometric means.
func write(w io.Writer, c config, commit string, trials []trial) {
	fmt.Fprintf(w, "explore %s --budget %s, base %s (%s) against this checkout\n\n", strings.Join(c.args, " "), c.budget, c.base, commit[:12])
	fmt.Fprintf(w, "| seed | build | draws | regions | measured | not measured | sales | sales a minute | idle CPU |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, t := range trials {
		idle := "-"
		if t.Idle >= 0 {
			idle = fmt.Sprintf("%.0f%%", 100*t.Idle)
		}
		fmt.Fprintf(w, "| %d | %s | %d | %d | %d | %d | %d | %.1f | %s |\n", t.seed, t.build, t.Report.Draws, len(t.Report.Findings),
			t.Measured(), len(t.Report.Findings)-t.Measured(), t.Report.Sales, t.Report.SalesPerMinute, idle)
	}
	var measured, rate []float64
	fmt.Fprintf(w, "\n| seed | regions measured, change / base | sales a minute, change / base |\n|---|---|---|\n")
	for i := 0; i+1 < len(trials); i += 2 {
		base, change := trials[i], trials[i+1]
		if base.build != "base" {
			base, change = change, base
		}
		m := ratio(float64(change.Measured()), float64(base.Measured()))
		r := ratio(change.Report.SalesPerMinute, base.Report.SalesPerMinute)
		fmt.Fprintf(w, "| %d | %s | %s |\n", base.seed, show(m), show(r))
		measured, rate = append(measured, m), append(rate, r)
	}
	fmt.Fprintf(w, "| all (geometric mean) | %s | %s |\n", show(geomean(measured)), show(geomean(rate)))
}

// ratio is a/b, NaN when b is 0 (nothing to compare with).
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// geomean is the geometric mean of the ratios that are numbers (a seed whose base
// measured nothing is left out); a ratio of 0 makes it 0.
func geomean(v []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range v {
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			continue
		case x <= 0:
			return 0
		}
		sum, n = sum+math.Log(x), n+1
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Exp(sum / float64(n))
}

func show(x float64) string {
	if math.IsNaN(x) {
		return "- (the base: none)"
	}
	return fmt.Sprintf("%.2f", x)
}
