// Package replay reruns a recorded run's sales from the sales its record keeps, to
// measure how often each earns its recorded class again (Replay), and searches a
// failing sale down to the smallest that still earns it (Shrink).
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

// SaleOf reads a recorded run's sale: its record's, or for a record older than the sale
// value, the command line it kept read back as the command reads one.
type SaleOf func(*results.Run) (*results.Sale, error)

// Recorded is the SaleOf of records that keep their sale.
func Recorded(r *results.Run) (*results.Sale, error) {
	if r.Sale == nil {
		return nil, errors.New("no recorded sale (a shard's sale, or a record older than replay)")
	}
	return r.Sale, nil
}

// Config is what a replay reruns: the sales of the run in Dir whose key contains Only,
// Times times each.
type Config struct {
	Dir   string
	Only  string
	Times int
	// SaleOf reads each run's sale. Default: Recorded.
	SaleOf SaleOf
}

// Plan reads the run and the sales cfg picks into the jobs to run, each checked, before
// anything starts; its errors are usage errors.
func (cfg Config) Plan() (orig *results.File, picked []int, jobs []bench.Job, err error) {
	if cfg.Times < 1 {
		return nil, nil, nil, bench.UsageError(fmt.Errorf("replay: --times must be positive, got %d", cfg.Times))
	}
	saleOf := cfg.SaleOf
	if saleOf == nil {
		saleOf = Recorded
	}
	if orig, err = results.ReadRun(cfg.Dir); err != nil {
		return nil, nil, nil, bench.UsageError(err)
	}
	for i, r := range orig.Runs {
		if !strings.Contains(r.Key(), cfg.Only) {
			continue
		}
		s, err := saleOf(&r)
		if err != nil {
			return nil, nil, nil, bench.UsageError(fmt.Errorf("replay: %s: %w", r.Key(), err))
		}
		j, err := bench.JobOf(s)
		if err != nil {
			return nil, nil, nil, bench.UsageError(fmt.Errorf("replay: %s: its sale %q: %w", r.Key(), bench.ShellLine(s.Args()), err))
		}
		picked = append(picked, i)
		for range cfg.Times {
			jobs = append(jobs, j)
		}
	}
	if len(picked) == 0 {
		return nil, nil, nil, bench.UsageError(fmt.Errorf("replay: no sale of %s matches --only %q", cfg.Dir, cfg.Only))
	}
	return orig, picked, jobs, nil
}

// Replay reruns the sales cfg picks under options o, each from the sale its record
// holds, and says whether each rerun earned the recorded class. The seed fixes the
// schedule, the victims and the draws, but real Redis adds timing: the answer is a
// rate, written back into the run's record and report, where a cell that did not
// repeat is marked. It returns the exit code (bench.ExitRule).
func Replay(ctx context.Context, o bench.Options, cfg Config, stdout, stderr io.Writer) int {
	orig, picked, jobs, err := cfg.Plan()
	if err != nil {
		return bench.Complain(stderr, err)
	}
	o.After = func(f *results.File) bench.Reading {
		lines, steady := tally(orig, picked, f.Runs)
		return bench.Reading{Lines: lines, Ending: bench.Ending{Code: bench.ExitOK, Why: steady}}
	}
	end := bench.Execute(ctx, o, jobs, stdout, stderr)
	if end.Code == bench.ExitUsage {
		return end.Tell(stdout)
	}
	// The tallies are in orig now: its record and report say how steady each cell is.
	dir := cfg.Dir
	if filepath.Base(dir) == "results.json" {
		dir = filepath.Dir(dir)
	}
	out := results.Reopen(dir)
	if err := out.Progress(orig); err != nil {
		return bench.Complain(stderr, fmt.Errorf("replay: write %s: %w", dir, err))
	}
	if err := report.Write(context.WithoutCancel(ctx), out, orig); err != nil {
		fmt.Fprintf(stderr, "stockbench: replay: report: %s\n", bench.OneLine(err.Error()))
		return end.And(bench.Ending{Code: bench.ExitUnfinished, Why: "the run's report could not be rewritten"}).Tell(stdout)
	}
	fmt.Fprintf(stdout, "replay: repeats written into %s\n", filepath.Join(dir, "results.json"))
	return end.Tell(stdout)
}

// tally counts, for each picked run of orig, the classes its reruns earned, keeps them
// in orig, and returns a line for each, and how many were steady.
func tally(orig *results.File, picked []int, reruns []results.Run) (lines []string, steadiness string) {
	steady := 0
	for _, i := range picked {
		r := &orig.Runs[i]
		rep := &results.Repeats{Classes: map[oracle.Class]int{}}
		for _, x := range reruns {
			if x.Key() != r.Key() || !x.Complete {
				continue
			}
			rep.Times++
			rep.Classes[x.Verdict.Class]++
			if x.Verdict.Class == r.Verdict.Class {
				rep.Same++
			}
		}
		if rep.Times == 0 {
			// Interrupted before any rerun of it ended: what an earlier replay tallied stands.
			lines = append(lines, fmt.Sprintf("%s: recorded %s; not rerun (the replay ended first)", r.Key(), r.Verdict.Class))
			continue
		}
		r.Repeats = rep
		if rep.Steady() {
			steady++
		}
		var got []string
		for _, c := range slices.Sorted(maps.Keys(rep.Classes)) {
			got = append(got, fmt.Sprintf("%s %d", c, rep.Classes[c]))
		}
		mark := ""
		if !rep.Steady() {
			mark = "  <- did not repeat"
		}
		lines = append(lines, fmt.Sprintf("%s: recorded %s; %d of %d reruns the same (%s)%s",
			r.Key(), r.Verdict.Class, rep.Same, rep.Times, strings.Join(got, ", "), mark))
	}
	return lines, fmt.Sprintf("%d of %d sales earned their recorded class on every rerun", steady, len(picked))
}
