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
	passed, err := gate.Report(stdout, base, cur, rules)
	switch {
	case err != nil:
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("gate: %w", err)))
	case !passed:
		return bench.Exit(stdout, bench.ExitFailed, fmt.Sprintf("run %s regressed from baseline %s (see above)", cur.ID, base.ID))
	}
	return bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("run %s did not regress from baseline %s", cur.ID, base.ID))
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
	return bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("%s now holds run %s (%d sales)", *to, f.ID, len(f.Runs)))
}
