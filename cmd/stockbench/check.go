package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/bench/findings"
	"github.com/stockbench/stockbench/bench/runfile"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
)

// checkCommand is `stockbench check [FILE]`: run what a run file names and judge it by
// its thresholds and its baseline: exit 0 when all held, 1 when one broke, a sale earned
// what fail_on names (or expect does not) or the run regressed, 2 on bad input, 3 when a
// sale could not finish (bench.ExitRule, the thresholds in place of the documentation).
func checkCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	p, help, err := checkJobs(args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	// The run file's thresholds say what counts, with its fail_on and expect: the
	// designs' documentation is not read.
	p.c.policy.Stated = true
	end := bench.Execute(ctx, p.c.options(args, p.after), p.jobs, stdout, stderr)
	if p.explore.Budget == 0 || end.Code == bench.ExitUsage || end.Code == bench.ExitInterrupted {
		return end.Tell(stdout)
	}
	fmt.Fprintf(stdout, "\ncheck: exploring %s for %s\n", strings.Join(findings.DesignNames(p.explore.Designs), " and "), p.explore.Budget)
	return end.And(p.c.explore(ctx, p.explore, append([]string{"check"}, args...), p.judge, stdout, stderr)).Tell(stdout)
}

// checkPlan is what a check runs and how it judges it.
type checkPlan struct {
	c     *common
	jobs  []bench.Job
	after bench.Afterword
	// explore is the run file's exploration, none when its Budget is zero; judge holds
	// its findings' reruns to the thresholds.
	explore explore.Config
	judge   bench.Afterword
}

// checkFlags binds check's flags: those of every running command, and the sale's.
func checkFlags() (*flag.FlagSet, *common, *saleFlags) {
	fs := newFlagSet("check", "check [FILE] [flags]   (FILE default "+runfile.Default+")")
	c, sf := new(common), new(saleFlags)
	c.bind(fs)
	c.bindPolicy(fs)
	c.bindRuns(fs)
	c.bindJUnit(fs)
	sf.bind(fs)
	return fs, c, sf
}

// checkJobs reads the command line and the run file into the jobs to run and the checks
// of their outcome; everything is checked before anything starts.
func checkJobs(args []string, stdout io.Writer) (*checkPlan, bool, error) {
	fs, _, _ := checkFlags()
	pos, help, err := parseWithArgs(fs, args, stdout)
	if help || err != nil {
		return nil, help, err
	}
	file := runfile.Default
	switch len(pos) {
	case 0:
	case 1:
		file = pos[0]
	default:
		return nil, false, bench.UsageError(fmt.Errorf("check: one run file at most, got %q", pos))
	}
	rf, err := runfile.Read(file)
	if err != nil {
		return nil, false, bench.UsageError(err)
	}
	// The file's settings first, then the command line's flags over them.
	fs, c, sf := checkFlags()
	if err := rf.Apply(fs); err != nil {
		return nil, false, bench.UsageError(fmt.Errorf("%s: %w", file, err))
	}
	if _, _, err := parseWithArgs(fs, args, io.Discard); err != nil {
		return nil, false, err
	}
	c.locate = runfile.Locator(file)
	p, err := rf.Plan(file, &c.designs)
	if err != nil {
		return nil, false, bench.UsageError(fmt.Errorf("%s: %w", file, err))
	}
	jobs, err := c.jobs(p, sf)
	if err != nil {
		return nil, false, err
	}
	j, th, err := rf.Checks(file, append(slices.Clone(p.Locks), p.Queues...))
	if err != nil {
		return nil, false, bench.UsageError(fmt.Errorf("%s: %w", file, err))
	}
	cp := &checkPlan{c: c, jobs: jobs, after: j, judge: func(f *results.File) bench.Reading { return runfile.Judge(f, th, nil, gate.Rules{}) }}
	if rf.Explore != nil {
		if cp.explore, err = findings.OfRunFile(rf.Explore, &c.designs, p, c.redisArgs()); err != nil {
			return nil, false, bench.UsageError(fmt.Errorf("%s: explore: %w", file, err))
		}
	}
	return cp, false, nil
}
