package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/designs/designfile"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
	"github.com/stockbench/stockbench/scenarios"
)

// DefaultRunFile is the run file check reads when it is given none.
const DefaultRunFile = "stockbench.json"

// runFile is a run file as written: the designs (built-in, or read from design files),
// the sales and faults to put them through, settings over the presets' (named as the
// flags), the thresholds every run must meet, and a baseline to gate against. Paths are
// relative to the run file. Lists left out take the defaults their fields name.
type runFile struct {
	// LockFiles and QueueFiles are design files, as --lock-file and --queue-file.
	LockFiles  []string `json:"lock_files"`
	QueueFiles []string `json:"queue_files"`
	// LockExecs, BuyExecs and QueueExecs are process adapters, as --lock-exec, ... (run
	// from the current directory); AdapterProcs sizes their pools, as --adapter-procs,
	// and AdapterNodes gives lock adapters several servers, as --adapter-nodes.
	LockExecs    []string `json:"lock_execs"`
	BuyExecs     []string `json:"buy_execs"`
	QueueExecs   []string `json:"queue_execs"`
	AdapterProcs int      `json:"adapter_procs"`
	AdapterNodes int      `json:"adapter_nodes"`
	// Locks and Queues name the designs to run. Default: those of the design files.
	Locks  *[]string `json:"locks"`
	Queues *[]string `json:"queues"`
	// Scenarios, Faults, QueueScenarios, QueueFaults and Fulfils are as matrix's flags,
	// with its defaults.
	Scenarios      []string `json:"scenarios"`
	Faults         []string `json:"faults"`
	QueueScenarios []string `json:"queue_scenarios"`
	QueueFaults    []string `json:"queue_faults"`
	Fulfils        []string `json:"fulfils"`
	// Settings set the sale's flags (buyers, ttl, think, ...) by name; flags on the
	// command line override them.
	Settings map[string]json.RawMessage `json:"settings"`
	// Thresholds are conditions by the runs they apply to: "*", "DESIGN" or
	// "DESIGN/FAULTS" (patterns allowed) -> ["oversold == 0", "p99 < 50ms", ...].
	Thresholds map[string][]string `json:"thresholds"`
	// Baseline is a results.json (stockbench baseline writes one) this run must not
	// regress from, by GateRules (a gate file) or the gate's defaults.
	Baseline  string `json:"baseline"`
	GateRules string `json:"gate_rules"`
	// FailOn and Expect are what fails a sale over what its design documents, as
	// --fail-on and --expect (flags on the command line override them).
	FailOn []string `json:"fail_on"`
	Expect []string `json:"expect"`
	// Runs runs each sale with that many seeds, as --runs, for thresholds on rates
	// (broken_locks_rate <= 0).
	Runs int `json:"runs"`
	// Explore, when set, explores the lock designs (or else the queue designs) after
	// the sales, as stockbench explore, and holds the reruns of each finding's smallest
	// sale to the thresholds too: a rate threshold reads them as it reads --runs.
	Explore *exploreSpec `json:"explore"`
}

// exploreSpec is a run file's exploration: as explore's flags.
type exploreSpec struct {
	// Budget is a duration, as "2m"; Seed, Faults and Confirm as explore's --seed,
	// --faults and --confirm.
	Budget  string   `json:"budget"`
	Seed    uint64   `json:"seed"`
	Faults  []string `json:"faults"`
	Confirm int      `json:"confirm"`
}

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
	code := bench.Execute(ctx, p.c.options(args, p.after), p.jobs, stdout, stderr)
	if p.explore.Budget == 0 || code == bench.ExitUsage || code == bench.ExitInterrupted {
		return code
	}
	fmt.Fprintf(stdout, "\ncheck: exploring %s for %s\n", strings.Join(designNames(p.explore.Designs), " and "), p.explore.Budget)
	return bench.Worst(code, p.c.runExplore(ctx, p.explore, append([]string{"check"}, args...), p.judge, stdout, stderr))
}

// checkPlan is what a check runs and how it judges it.
type checkPlan struct {
	c     *common
	jobs  []bench.Job
	after bench.Afterword
	// explore is the run file's exploration, none when its Budget is zero; judge holds
	// its findings' reruns to the thresholds.
	explore explore.Config
	judge   func(*results.File) ([]string, int)
}

// checkFlags binds check's flags: those of every running command, and the sale's.
func checkFlags() (*flag.FlagSet, *common, *saleFlags) {
	fs := newFlagSet("check", "check [FILE] [flags]   (FILE default "+DefaultRunFile+")")
	c, sf := new(common), new(saleFlags)
	c.bind(fs)
	c.bindPolicy(fs)
	c.bindRuns(fs)
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
	file := DefaultRunFile
	switch len(pos) {
	case 0:
	case 1:
		file = pos[0]
	default:
		return nil, false, bench.UsageError(fmt.Errorf("check: one run file at most, got %q", pos))
	}
	rf, err := readRunFile(file)
	if err != nil {
		return nil, false, bench.UsageError(err)
	}
	// The file's settings first, then the command line's flags over them.
	fs, c, sf := checkFlags()
	if err := rf.apply(fs); err != nil {
		return nil, false, bench.UsageError(fmt.Errorf("%s: %w", file, err))
	}
	if _, _, err := parseWithArgs(fs, args, io.Discard); err != nil {
		return nil, false, err
	}
	p, err := rf.plan(file, &c.designs)
	if err != nil {
		return nil, false, bench.UsageError(fmt.Errorf("%s: %w", file, err))
	}
	jobs, err := p.jobs(sf, c)
	if err != nil {
		return nil, false, err
	}
	j, th, err := rf.checks(file, append(slices.Clone(p.locks), p.queues...))
	if err != nil {
		return nil, false, bench.UsageError(fmt.Errorf("%s: %w", file, err))
	}
	cp := &checkPlan{c: c, jobs: jobs, after: j, judge: func(f *results.File) ([]string, int) { return checkRun(f, th, nil, gate.Rules{}) }}
	if rf.Explore != nil {
		if cp.explore, err = rf.exploration(c, p); err != nil {
			return nil, false, bench.UsageError(fmt.Errorf("%s: explore: %w", file, err))
		}
	}
	return cp, false, nil
}

// exploration is the run file's exploration of the designs of p, checked.
func (rf *runFile) exploration(c *common, p plan) (explore.Config, error) {
	x := rf.Explore
	budget, err := time.ParseDuration(x.Budget)
	if err != nil {
		return explore.Config{}, fmt.Errorf("budget: %w", err)
	}
	locks, queues := p.locks, []string(nil)
	if len(locks) == 0 {
		queues = p.queues
	}
	cfg, err := c.exploreConfig(locks, queues, strings.Join(x.Faults, ","), false)
	if err != nil {
		return cfg, err
	}
	confirm := cmp.Or(x.Confirm, explore.DefaultConfirm)
	if err := exploreLimits(budget, confirm, explore.DefaultParallel); err != nil {
		return cfg, err
	}
	cfg.Budget, cfg.Seed, cfg.Confirm, cfg.Parallel = budget, x.Seed, confirm, explore.DefaultParallel
	return cfg, nil
}

// readRunFile reads and decodes a run file strictly: an unknown field is an error.
func readRunFile(file string) (*runFile, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) && file == DefaultRunFile {
		return nil, fmt.Errorf("check: no %s here; name a run file (see examples/stockbench.json)", DefaultRunFile)
	}
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rf runFile
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, designfile.JSONError(b, err))
	}
	return &rf, nil
}

// saleSettings are the flags a run file's settings may set: the sale's, not the
// machine's (where Redis is, where results go), which stay with the command line.
var saleSettings = func() []string {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	new(saleFlags).bind(fs)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}()

// apply sets the flags the settings name, in a stable order.
func (rf *runFile) apply(fs *flag.FlagSet) error {
	names := make([]string, 0, len(rf.Settings))
	for n := range rf.Settings {
		names = append(names, n)
	}
	sort.Strings(names)
	for flag, classes := range map[string][]string{"fail-on": rf.FailOn, "expect": rf.Expect} {
		if classes == nil {
			continue
		}
		if err := fs.Set(flag, strings.Join(classes, ",")); err != nil {
			return fmt.Errorf("%s: %w", strings.ReplaceAll(flag, "-", "_"), err)
		}
	}
	if rf.Runs != 0 {
		if err := fs.Set("runs", fmt.Sprint(rf.Runs)); err != nil {
			return fmt.Errorf("runs: %w", err)
		}
	}
	for _, n := range names {
		if !slices.Contains(saleSettings, n) {
			return fmt.Errorf("settings.%s: unknown setting (settings: %s)", n, strings.Join(saleSettings, ", "))
		}
		var v any
		if err := json.Unmarshal(rf.Settings[n], &v); err != nil {
			return fmt.Errorf("settings.%s: %w", n, err)
		}
		value := string(rf.Settings[n]) // a number or a boolean as written
		switch v := v.(type) {
		case string:
			value = v
		case float64, bool:
		default:
			return fmt.Errorf("settings.%s: want a string, a number or true/false", n)
		}
		if err := fs.Set(n, value); err != nil {
			return fmt.Errorf("settings.%s: %w", n, err)
		}
	}
	return nil
}

// plan is what the run file names, its design files read into designs.
func (rf *runFile) plan(file string, designs *catalogue) (plan, error) {
	for _, f := range rf.LockFiles {
		if err := designs.adder(true)(relTo(file, f)); err != nil {
			return plan{}, fmt.Errorf("lock_files: %w", err)
		}
	}
	for _, f := range rf.QueueFiles {
		if err := designs.adder(false)(relTo(file, f)); err != nil {
			return plan{}, fmt.Errorf("queue_files: %w", err)
		}
	}
	for _, e := range rf.LockExecs {
		if err := designs.execAdder(adapter.SupportsLock)(e); err != nil {
			return plan{}, fmt.Errorf("lock_execs: %w", err)
		}
	}
	for _, e := range rf.QueueExecs {
		if err := designs.execAdder(adapter.SupportsQueue)(e); err != nil {
			return plan{}, fmt.Errorf("queue_execs: %w", err)
		}
	}
	for _, e := range rf.BuyExecs {
		if err := designs.execAdder(adapter.SupportsBuy)(e); err != nil {
			return plan{}, fmt.Errorf("buy_execs: %w", err)
		}
	}
	if rf.AdapterProcs < 0 {
		return plan{}, fmt.Errorf("adapter_procs: must not be negative, got %d", rf.AdapterProcs)
	}
	if rf.AdapterNodes < 0 || rf.AdapterNodes > maxNodes {
		return plan{}, fmt.Errorf("adapter_nodes: must be 1 to %d, got %d", maxNodes, rf.AdapterNodes)
	}
	designs.procs, designs.nodes = rf.AdapterProcs, rf.AdapterNodes
	p := plan{
		locks:     implNames(designs.locks(), func(i lockimpl.Impl) string { return i.Name }),
		queues:    implNames(designs.queues(), func(i queueimpl.Impl) string { return i.Name }),
		scenarios: orList(rf.Scenarios, scenarios.DefaultMatrix), faults: orList(rf.Faults, splitList(plansOf(faults.Locks))),
		queueScenarios: orList(rf.QueueScenarios, scenarios.DefaultQueueMatrix),
		queueFaults:    orList(rf.QueueFaults, splitList(plansOf(faults.Queues))),
		fulfils:        orList(rf.Fulfils, words(scenarios.Fulfils)),
	}
	if rf.Locks != nil {
		p.locks = *rf.Locks
	}
	if rf.Queues != nil {
		p.queues = *rf.Queues
	}
	return p, nil
}

// checks reads the thresholds and the baseline now, so that a bad one stops the check
// before it runs, and returns what judges the run.
func (rf *runFile) checks(file string, designs []string) (bench.Afterword, gate.Thresholds, error) {
	th := gate.Thresholds{}
	for sel, list := range rf.Thresholds {
		where := fmt.Sprintf("thresholds[%q]", sel)
		if err := selects(sel, designs); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", where, err)
		}
		for i, s := range list {
			t, err := gate.ParseThreshold(s)
			if err != nil {
				return nil, nil, fmt.Errorf("%s[%d]: %w", where, i, err)
			}
			if t.Ref != "" && !slices.Contains(designs, t.Ref) {
				return nil, nil, fmt.Errorf("%s[%d]: %q compares with %s, which this run does not run (designs: %s)", where, i, s, t.Ref, joinNames(designs))
			}
			th[sel] = append(th[sel], t)
		}
	}
	var base *results.File
	rules := gate.Defaults
	if rf.Baseline != "" {
		var err error
		if base, err = readResults(relTo(file, rf.Baseline)); err != nil {
			return nil, nil, fmt.Errorf("baseline: %w", err)
		}
		gr := ""
		if rf.GateRules != "" {
			gr = relTo(file, rf.GateRules)
		}
		if rules, err = gateRules(gr, nil); err != nil {
			return nil, nil, fmt.Errorf("gate_rules: %w", err)
		}
	} else if rf.GateRules != "" {
		return nil, nil, errors.New("gate_rules: there is no baseline to gate against")
	}
	if len(th) == 0 && base == nil {
		return nil, nil, errors.New("nothing to check: give thresholds, a baseline, or both")
	}
	return func(f *results.File) ([]string, int) { return checkRun(f, th, base, rules) }, th, nil
}

// selects says what is wrong with a selector: a design part that is no pattern must name
// a design of the run, so that a typo does not pass by checking nothing.
func selects(sel string, designs []string) error {
	d, _, _ := strings.Cut(sel, "/")
	if _, err := path.Match(sel, ""); err != nil {
		return fmt.Errorf("a bad pattern: %w", err)
	}
	if strings.ContainsAny(d, `*?[\`) || slices.Contains(designs, d) {
		return nil
	}
	return fmt.Errorf("%s is no design of this run (designs: %s)", d, joinNames(designs))
}

// checkRun applies the thresholds and the baseline to a finished run, records them in
// it, and returns the lines to print and the exit code.
func checkRun(f *results.File, th gate.Thresholds, base *results.File, rules gate.Rules) ([]string, int) {
	f.Checks = gate.Check(f, th)
	var lines []string
	for _, b := range results.Broken(f.Checks) {
		lines = append(lines, "BROKEN: "+b)
	}
	broken := len(lines)
	regressions := 0
	if base != nil {
		res := gate.Compare(base, f, rules)
		for _, r := range res.Regressions {
			f.Checks = append(f.Checks, results.Check{Run: "baseline " + base.ID, Threshold: r})
			lines = append(lines, "REGRESSION: "+r)
		}
		regressions = len(res.Regressions)
	}
	held := len(f.Checks) - broken - regressions
	switch {
	case broken+regressions > 0:
		lines = append(lines, fmt.Sprintf("check: FAIL, %d of %d thresholds broken, %d regressions", broken, broken+held, regressions))
		return lines, bench.ExitFailed
	case !f.Complete:
		lines = append(lines, "check: FAIL, the run did not finish: "+f.Incomplete)
		return lines, bench.ExitUnfinished
	}
	return append(lines, fmt.Sprintf("check: PASS, %d thresholds held on %d runs%s", held, len(f.Runs), against(base))), bench.ExitOK
}

func against(base *results.File) string {
	if base == nil {
		return ""
	}
	return ", no regression from baseline " + base.ID
}

// relTo is p relative to the run file's directory, unless absolute.
func relTo(file, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(file), p)
}

func orList(given, def []string) []string {
	if given == nil {
		return def
	}
	return given
}
