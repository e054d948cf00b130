package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"

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
	var edits edits[gate.Rules]
	d := gate.Defaults
	field(fset, &edits, "reference", fmt.Sprintf("soft gates compare ratios to this `design` in the same run; \"\" for absolute figures (default %q)", d.Reference), text,
		func(r *gate.Rules, s string) { r.Reference = s })
	field(fset, &edits, "queue-reference", fmt.Sprintf("the same `design` for queue sales (default %q)", d.QueueReference), text,
		func(r *gate.Rules, s string) { r.QueueReference = s })
	field(fset, &edits, "max-throughput-drop", fmt.Sprintf("largest fall in sales/s that passes, a `share`: 0.3 = 30%% (default %g)", d.MaxThroughputDrop), float,
		func(r *gate.Rules, v float64) { r.MaxThroughputDrop = v })
	field(fset, &edits, "max-p99-rise", fmt.Sprintf("largest rise in p99 latency that passes, a `share` (default %g)", d.MaxP99Rise), float,
		func(r *gate.Rules, v float64) { r.MaxP99Rise = v })
	field(fset, &edits, "max-p999-rise", fmt.Sprintf("largest rise in p99.9 latency that passes, a `share` (default %g)", d.MaxP999Rise), float,
		func(r *gate.Rules, v float64) { r.MaxP999Rise = v })
	field(fset, &edits, "min-samples", fmt.Sprintf("fewest latency samples (`n`) a percentile is gated on (default %d)", d.MinSamples), int64Of,
		func(r *gate.Rules, n int64) { r.MinSamples = n })
	field(fset, &edits, "soft", fmt.Sprintf("how speed is judged: %q (a change beyond --min-effect and significant at --alpha over the runs of --repeat; a sale run once on a side falls to the tolerances) or %q (the tolerances only) (default %q)", gate.SoftTest, gate.SoftTolerance, d.Soft), text,
		func(r *gate.Rules, s string) { r.Soft = s })
	field(fset, &edits, "alpha", fmt.Sprintf("one-sided p-value below which --soft test counts a change significant (default %g)", d.Alpha), float,
		func(r *gate.Rules, v float64) { r.Alpha = v })
	field(fset, &edits, "min-effect", fmt.Sprintf("smallest change --soft test flags: a rise of the median latency or a fall of sales/s, a `share` (default %g)", d.MinEffect), float,
		func(r *gate.Rules, v float64) { r.MinEffect = v })
	toggle(fset, &edits, "soft-under-faults", "soft-gate runs with a fault plan too",
		func(r *gate.Rules, on bool) { r.SoftUnderFaults = on })
	if help, err := parse(fset, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	rules, err := gateRules(*rulesFile, edits)
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

// gateRules are the defaults, overridden by the gate file, overridden by the flags given.
func gateRules(file string, flags edits[gate.Rules]) (gate.Rules, error) {
	rules := gate.Defaults
	if file != "" {
		var err error
		if rules, err = gate.ReadRules(file); err != nil {
			return rules, err
		}
	}
	flags.apply(&rules)
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
