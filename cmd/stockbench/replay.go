package main

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

// replayCommand is `stockbench replay RUN_DIR`: every sale of a run (or those --only
// names) run again --times times, each from the command its record holds, and whether
// each rerun earned the recorded class. The seed fixes the schedule, the victims and the
// draws, but real Redis adds timing: the answer is a rate, written back into the run's
// record and report, where a cell that did not repeat is marked.
func replayCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("replay", "replay RUN_DIR [--times N] [--only TEXT]")
	c := &common{sideBySide: true, parallel: defaultParallel}
	c.bind(fs)
	c.bindPolicy(fs)
	times := fs.Int("times", 1, "how many times to rerun each sale")
	only := fs.String("only", "", "rerun only the sales whose scenario/design/fault contains this `text`, as fault-sale/token/failover")
	dirs, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if len(dirs) != 1 {
		return bench.Complain(stderr, bench.UsageError(errors.New("replay: name one run directory (results/runs/ID)")))
	}
	if *times < 1 {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("replay: --times must be positive, got %d", *times)))
	}
	orig, err := readResults(dirs[0])
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	var picked []int
	var jobs []bench.Job
	for i, r := range orig.Runs {
		if !strings.Contains(r.Key(), *only) {
			continue
		}
		s, err := saleOf(&r)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("replay: %s: %w", r.Key(), err)))
		}
		j, err := jobOf(s)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(fmt.Errorf("replay: %s: its sale %q: %w", r.Key(), bench.ShellLine(s.Args()), err)))
		}
		js := []bench.Job{j}
		picked = append(picked, i)
		for range *times {
			jobs = append(jobs, js...)
		}
	}
	if len(picked) == 0 {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("replay: no sale of %s matches --only %q", dirs[0], *only)))
	}
	after := func(f *results.File) ([]string, int) {
		return tally(orig, picked, f.Runs), bench.ExitOK
	}
	code := bench.Execute(ctx, c.options(append([]string{"replay"}, args...), after), jobs, stdout, stderr)
	if code == bench.ExitUsage {
		return code
	}
	// The tallies are in orig now: its record and report say how steady each cell is.
	dir := resultsDir(dirs[0])
	out := results.Reopen(dir)
	if err := out.Progress(orig); err != nil {
		return bench.Complain(stderr, fmt.Errorf("replay: write %s: %w", dir, err))
	}
	if err := report.Write(context.WithoutCancel(ctx), out, orig); err != nil {
		fmt.Fprintf(stderr, "stockbench: replay: report: %s\n", bench.OneLine(err.Error()))
		return bench.Worst(code, bench.ExitUnfinished)
	}
	fmt.Fprintf(stdout, "replay: repeats written into %s\n", filepath.Join(dir, "results.json"))
	return code
}

// tally counts, for each picked run of orig, the classes its reruns earned, keeps them
// in orig, and returns a line for each, then the summary.
func tally(orig *results.File, picked []int, reruns []results.Run) []string {
	var lines []string
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
	return append(lines, fmt.Sprintf("%d of %d sales earned their recorded class on every rerun", steady, len(picked)))
}
