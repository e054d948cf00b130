// Command power measures the explorer's power as rates on this machine (make power):
// explorations of pairs known to differ, and of a design against itself, each run with
// several seeds, and the share of seeds that told the pair apart against its target,
// with each run's draws, faults struck, regions measured and the machine's idle CPU.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/internal/tools/exploreproc"
)

// pair is an exploration whose outcome is known: Differ pairs must be told apart in at
// least Want of the seeds; a design against itself (Differ false) in at most Want.
type pair struct {
	Name   string
	Args   []string
	Budget time.Duration
	Differ bool
	// Want is the target, out of five seeds (scaled to the seeds run).
	Want int
	// Why is where its difference comes from, or why there is none.
	Why string
}

// pairs are issue 62's: the redsync pair at 10 minutes, set-nx-ex against token at 3,
// and an A/A.
var pairs = []pair{
	{Name: "redsync", Args: []string{"--lock-go", "github.com/go-redsync/redsync/v4@v4.12.0 --extend", "--lock-go", "github.com/go-redsync/redsync/v4@v4.12.1 --extend", "--adapter-nodes", "3", "--parallel", "4"},
		Budget: 10 * time.Minute, Differ: true, Want: 4, Why: "v4.12.0's Extend and v4.12.1's differ (docs/explore.md)"},
	{Name: "set-nx-ex-token", Args: []string{"--lock", "set-nx-ex", "--lock", "token"},
		Budget: 3 * time.Minute, Differ: true, Want: 5, Why: "set-nx-ex's bare DEL frees the next holder's lock (LOCK-BROKEN); token's owner check does not"},
	{Name: "aa", Args: []string{"--lock", "set-nx-ex", "--lock", "set-nx-ex"},
		Budget: 3 * time.Minute, Differ: false, Want: 0, Why: "one design against itself: any difference is a false alarm"},
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	bin   string
	seeds int
	only  []pair
	redis string
}

func parse(args []string) (config, error) {
	fs := flag.NewFlagSet("power", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bin := fs.String("bin", "bin/stockbench", "the stockbench binary")
	seeds := fs.Int("seeds", 5, "seeds per pair, 1 to 20")
	only := fs.String("pairs", "redsync,set-nx-ex-token,aa", "the pairs, comma-separated")
	redis := fs.String("redis", "process", "the Redis the explorations start (--redis)")
	if err := fs.Parse(args); err != nil {
		return config{}, fmt.Errorf("power: %w", err)
	}
	c := config{bin: *bin, seeds: *seeds, redis: *redis}
	if c.seeds < 1 || c.seeds > 20 {
		return c, fmt.Errorf("power: %d seeds: from 1 to 20", c.seeds)
	}
	for _, name := range catalog.Split(*only) {
		i := slices.IndexFunc(pairs, func(p pair) bool { return p.Name == name })
		if i < 0 {
			return c, fmt.Errorf("power: unknown pair %q (known: redsync, set-nx-ex-token, aa)", name)
		}
		c.only = append(c.only, pairs[i])
	}
	if len(c.only) == 0 {
		return c, errors.New("power: no pair")
	}
	if _, err := os.Stat(c.bin); err != nil {
		return c, fmt.Errorf("power: %s: no stockbench binary (make build)", c.bin)
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	c, err := parse(args)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	dir, err := os.MkdirTemp("", "stockbench-power-")
	if err != nil {
		return bench.Complain(stderr, fmt.Errorf("power: %w", err))
	}
	defer os.RemoveAll(dir)
	for _, p := range c.only {
		var runs []exploreproc.Run
		for seed := 1; seed <= c.seeds; seed++ {
			args := append(slices.Clone(p.Args), "--budget", p.Budget.String(), "--seed", strconv.Itoa(seed), "--redis", c.redis)
			r, err := exploreproc.Explore(ctx, "power: "+p.Name, c.bin, args, filepath.Join(dir, fmt.Sprintf("%s-%d", p.Name, seed)))
			if err != nil {
				return bench.Complain(stderr, err)
			}
			fmt.Fprintf(stderr, "power: %s, seed %d: told apart %v, %d draws, %d regions measured, in %s\n", p.Name, seed, r.ToldApart(), r.Report.Draws, r.Measured(), r.Took.Round(time.Second))
			runs = append(runs, r)
		}
		write(stdout, p, runs)
	}
	return bench.ExitOK
}

// write prints p's runs as a table and its rate against its target.
func write(w io.Writer, p pair, runs []exploreproc.Run) {
	fmt.Fprintf(w, "\n%s: explore %s --budget %s (%s)\n\n", p.Name, quote(p.Args), p.Budget, p.Why)
	fmt.Fprintf(w, "| seed | told apart | draws | faults struck 3 times | regions | measured | sales a minute | idle CPU |\n|---|---|---|---|---|---|---|---|\n")
	apart := 0
	for i, r := range runs {
		if r.ToldApart() {
			apart++
		}
		idle := "-"
		if r.Idle >= 0 {
			idle = fmt.Sprintf("%.0f%%", 100*r.Idle)
		}
		fmt.Fprintf(w, "| %d | %s | %d | %d of %d | %d | %d | %.1f | %s |\n", i+1, yes(r.ToldApart()), r.Report.Draws, r.Struck(), len(r.Report.Faults),
			len(r.Report.Findings), r.Measured(), r.Report.SalesPerMinute, idle)
	}
	want := (p.Want*len(runs) + 4) / 5 // the target out of five, scaled, rounded up
	met := apart >= want
	target := fmt.Sprintf("at least %d of %d", want, len(runs))
	if !p.Differ {
		want = p.Want * len(runs) / 5
		met, target = apart <= want, fmt.Sprintf("at most %d of %d", want, len(runs))
	}
	verdict := "met"
	if !met {
		verdict = "NOT met"
	}
	fmt.Fprintf(w, "\n%s: told apart in %d of %d seeds (target %s: %s)\n", p.Name, apart, len(runs), target, verdict)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// quote is args as a shell would take them back.
func quote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if strings.ContainsAny(a, " \"'") {
			out[i] = strconv.Quote(a)
		}
	}
	return strings.Join(out, " ")
}
