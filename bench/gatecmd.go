package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/stockbench/stockbench/results"
)

// gateCommand is `stockbench gate`: compare a run with a baseline; exit 1 with one line
// per regression.
func gateCommand(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("gate", "gate --baseline FILE [--current DIR] [--rules FILE] [tolerances]")
	baseline := fset.String("baseline", "", "the baseline results.json, or its run directory (required)")
	current := fset.String("current", "", "the run to gate (default: the newest under --runs)")
	runs := fset.String("runs", "results/runs", "where to look for the newest run")
	rulesFile := fset.String("rules", "", "a JSON gate file whose fields override the defaults (see README)")
	d := results.DefaultGateRules
	var g results.GateRules
	fset.StringVar(&g.Reference, "reference", d.Reference, `soft gates compare ratios to this lock in the same run; "" for absolute figures`)
	fset.StringVar(&g.QueueReference, "queue-reference", d.QueueReference, `the same for queue sales`)
	fset.Float64Var(&g.MaxThroughputDrop, "max-throughput-drop", d.MaxThroughputDrop, "largest fall in sales/s that passes (0.3 = 30%)")
	fset.Float64Var(&g.MaxP99Rise, "max-p99-rise", d.MaxP99Rise, "largest rise in p99 latency that passes")
	fset.Float64Var(&g.MaxP999Rise, "max-p999-rise", d.MaxP999Rise, "largest rise in p99.9 latency that passes")
	fset.Int64Var(&g.MinSamples, "min-samples", d.MinSamples, "fewest latency samples a percentile is gated on")
	fset.BoolVar(&g.SoftUnderFaults, "soft-under-faults", d.SoftUnderFaults, "soft-gate runs with a fault plan too")
	set, help, err := parse(fset, args, stdout)
	if help || err != nil {
		return report(stderr, err)
	}
	rules, err := gateRules(*rulesFile, g, set)
	if err != nil {
		return report(stderr, usageError(err))
	}
	if *baseline == "" {
		return report(stderr, usageError(errors.New("gate: --baseline is required")))
	}
	base, err := readResults(*baseline)
	if err != nil {
		return report(stderr, usageError(fmt.Errorf("gate: baseline: %w", err)))
	}
	cur, _, err := readRunOrNewest(*current, *runs, "--current")
	if err != nil {
		return report(stderr, usageError(fmt.Errorf("gate: current: %w", err)))
	}
	res := results.Gate(base, cur, rules)
	fmt.Fprintf(stdout, "gate: %s against baseline %s: %d runs compared (reference: %s)\n", cur.ID, base.ID, res.Compared, refs(rules))
	for _, n := range res.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	for _, r := range res.Regressions {
		fmt.Fprintln(stdout, "REGRESSION:", r)
	}
	if !res.Passed() {
		fmt.Fprintf(stdout, "gate: FAIL, %d regressions\n", len(res.Regressions))
		return exitFailed
	}
	fmt.Fprintln(stdout, "gate: PASS")
	return exitOK
}

// gateRules are the defaults, overridden by the gate file, overridden by the flags set.
func gateRules(file string, flags results.GateRules, set map[string]bool) (results.GateRules, error) {
	rules := results.DefaultGateRules
	if file != "" {
		var err error
		if rules, err = results.ReadGateRules(file); err != nil {
			return rules, err
		}
	}
	for name, apply := range map[string]func(){
		"reference":           func() { rules.Reference = flags.Reference },
		"queue-reference":     func() { rules.QueueReference = flags.QueueReference },
		"max-throughput-drop": func() { rules.MaxThroughputDrop = flags.MaxThroughputDrop },
		"max-p99-rise":        func() { rules.MaxP99Rise = flags.MaxP99Rise },
		"max-p999-rise":       func() { rules.MaxP999Rise = flags.MaxP999Rise },
		"min-samples":         func() { rules.MinSamples = flags.MinSamples },
		"soft-under-faults":   func() { rules.SoftUnderFaults = flags.SoftUnderFaults },
	} {
		if set[name] {
			apply()
		}
	}
	return rules, rules.Validate()
}

// runIDPattern matches the names of run directories: their UTC start time, then a random part,
// so the newest sorts last.
var runIDPattern = regexp.MustCompile(`^\d{8}-\d{6}-[0-9a-f]+$`)

// readRunOrNewest reads the run dir names, or, when dir is empty, the newest run
// directory under runs that holds a results.json; flag is the flag that names one.
func readRunOrNewest(dir, runs, flag string) (*results.File, string, error) {
	if dir == "" {
		matches, _ := filepath.Glob(filepath.Join(runs, "*", "results.json"))
		sort.Strings(matches)
		for i := len(matches) - 1; i >= 0 && dir == ""; i-- {
			if runIDPattern.MatchString(filepath.Base(filepath.Dir(matches[i]))) {
				dir = filepath.Dir(matches[i])
			}
		}
		if dir == "" {
			return nil, "", fmt.Errorf("no run under %s; run one, or name it with %s", runs, flag)
		}
	}
	f, err := readResults(dir)
	return f, dir, err
}

// baselineCommand is `stockbench baseline`: save a run, slimmed, as the gate's baseline.
func baselineCommand(args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("baseline", "baseline [--from RUN_DIR] [--to FILE]")
	from := fset.String("from", "", "the run to keep (default: the newest under --runs)")
	runs := fset.String("runs", "results/runs", "where to look for the newest run")
	to := fset.String("to", "baseline/results.json", "the baseline file to write")
	if _, help, err := parse(fset, args, stdout); help || err != nil {
		return report(stderr, err)
	}
	f, dir, err := readRunOrNewest(*from, *runs, "--from")
	if err != nil {
		return report(stderr, usageError(fmt.Errorf("baseline: %w", err)))
	}
	if !f.Complete {
		return report(stderr, usageError(fmt.Errorf("baseline: %s is incomplete (%s); a baseline must be a whole run", dir, f.Incomplete)))
	}
	if err := os.MkdirAll(filepath.Dir(*to), 0o755); err != nil {
		return report(stderr, fmt.Errorf("baseline: %w", err))
	}
	if err := results.WriteFile(*to, results.Slim(f)); err != nil {
		return report(stderr, err)
	}
	fmt.Fprintf(stdout, "baseline: %s now holds run %s (%d sales)\n", *to, f.ID, len(f.Runs))
	return exitOK
}

// refs names the gate's reference designs for its first line.
func refs(g results.GateRules) string {
	if g.Reference == "" && g.QueueReference == "" {
		return "none, absolute figures"
	}
	return fmt.Sprintf("%s for locks, %s for queues", or(g.Reference, "none"), or(g.QueueReference, "none"))
}
