package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
)

// gateCommand is `stockbench gate`: compare a run with a baseline; exit 1 with one line
// per regression.
func gateCommand(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("gate", "gate --baseline FILE [--current DIR] [--rules FILE] [rules]")
	baseline := fset.String("baseline", "", "the baseline results.json, or its run directory (required)")
	current := fset.String("current", "", "the run to gate (default: the newest under --runs)")
	runs := fset.String("runs", "results/runs", "where to look for the newest run")
	rulesFile := fset.String("rules", "", "a JSON gate file whose fields override the defaults (see README)")
	var given [][2]string
	for _, f := range gate.Flags {
		set := func(v string) error {
			if err := f.Set(new(gate.Rules), v); err != nil {
				return err
			}
			given = append(given, [2]string{f.Name, v})
			return nil
		}
		if f.Switch {
			fset.BoolFunc(f.Name, f.Usage, set)
		} else {
			fset.Func(f.Name, f.Usage, set)
		}
	}
	if help, err := parse(fset, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	rules, err := gate.Load(*rulesFile, given)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	if *baseline == "" {
		return bench.Complain(stderr, bench.UsageError(errors.New("gate: --baseline is required")))
	}
	base, err := readResults(*baseline)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: baseline: %w", err)))
	}
	cur, _, err := readRunOrNewest(*current, *runs, "--current")
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: current: %w", err)))
	}
	for _, f := range []*results.File{base, cur} {
		for _, r := range f.Runs {
			if r.Shard != nil && !r.Shard.Merged {
				return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: %s holds shard %d of %d, a partial record: gate the merge of its shards (stockbench merge)", f.ID, r.Shard.Index, r.Shard.Count)))
			}
		}
	}
	res := gate.Compare(base, cur, rules)
	fmt.Fprintf(stdout, "gate: %s against baseline %s: %d runs compared (reference: %s)\n", cur.ID, base.ID, res.Compared, refs(rules))
	for _, n := range res.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	for _, r := range res.Regressions {
		fmt.Fprintln(stdout, "REGRESSION:", r)
	}
	if !res.Passed() {
		fmt.Fprintf(stdout, "gate: FAIL, %d regressions\n", len(res.Regressions))
		return bench.ExitFailed
	}
	fmt.Fprintln(stdout, "gate: PASS")
	return bench.ExitOK
}

// readRunOrNewest reads the run dir names, or, when dir is empty, the newest run
// under runs (results.Newest); flag is the flag that names one.
func readRunOrNewest(dir, runs, flag string) (*results.File, string, error) {
	if dir == "" {
		if dir = results.Newest(runs); dir == "" {
			return nil, "", fmt.Errorf("no run under %s; run one, or name it with %s", runs, flag)
		}
	}
	f, err := results.ReadRun(dir)
	return f, dir, err
}

// baselineCommand is `stockbench baseline`: save a run, slimmed, as the gate's baseline.
func baselineCommand(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("baseline", "baseline [--from RUN_DIR] [--to FILE]")
	from := fset.String("from", "", "the run to keep (default: the newest under --runs)")
	runs := fset.String("runs", "results/runs", "where to look for the newest run")
	to := fset.String("to", "baseline/results.json", "the baseline file to write")
	if help, err := parse(fset, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	f, dir, err := readRunOrNewest(*from, *runs, "--from")
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("baseline: %w", err)))
	}
	if !f.Complete {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("baseline: %s is incomplete (%s); a baseline must be a whole run", dir, f.Incomplete)))
	}
	if err := os.MkdirAll(filepath.Dir(*to), 0o755); err != nil {
		return bench.Complain(stderr, fmt.Errorf("baseline: %w", err))
	}
	if err := results.WriteFile(*to, results.Slim(f)); err != nil {
		return bench.Complain(stderr, err)
	}
	fmt.Fprintf(stdout, "baseline: %s now holds run %s (%d sales)\n", *to, f.ID, len(f.Runs))
	return bench.ExitOK
}

// refs names the gate's reference designs for its first line.
func refs(g gate.Rules) string {
	if g.Reference == "" && g.QueueReference == "" {
		return "none, absolute figures"
	}
	return fmt.Sprintf("%s for locks, %s for queues", or(g.Reference, "none"), or(g.QueueReference, "none"))
}
