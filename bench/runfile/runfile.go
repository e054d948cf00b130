// Package runfile reads a run file (stockbench.json: the designs, the sales and faults
// to put them through, settings, thresholds, a baseline and an exploration) and judges
// a finished run by it, as stockbench check does.
package runfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/designs/designfile"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
	"github.com/stockbench/stockbench/scenarios"
)

// Default is the run file check reads when it is given none.
const Default = "stockbench.json"

// File is a run file as written: the designs (built-in, or read from design files),
// the sales and faults to put them through, settings over the presets' (named as the
// flags), the thresholds every run must meet, and a baseline to gate against. Paths are
// relative to the run file. Lists left out take the defaults their fields name.
type File struct {
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
	Explore *Explore `json:"explore"`
}

// Explore is a run file's exploration: as explore's flags.
type Explore struct {
	// Budget is a duration, as "2m"; Seed, Faults and Confirm as explore's --seed,
	// --faults and --confirm.
	Budget  string   `json:"budget"`
	Seed    uint64   `json:"seed"`
	Faults  []string `json:"faults"`
	Confirm int      `json:"confirm"`
}

// Read reads and decodes a run file strictly: an unknown field is an error.
func Read(file string) (*File, error) {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) && file == Default {
		return nil, fmt.Errorf("check: no %s here; name a run file (see examples/stockbench.json)", Default)
	}
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var rf File
	if err := dec.Decode(&rf); err != nil {
		return nil, fmt.Errorf("%s: %w", file, designfile.JSONError(b, err))
	}
	return &rf, nil
}

// SaleSettings are the flags a run file's settings may set: the sale's
// (scenarios.Settings, the seed and the linearizability check), not the machine's
// (where Redis is, where results go), which stay with the command line.
var SaleSettings = func() []string {
	var names []string
	for _, st := range scenarios.Settings {
		if st.Flag {
			names = append(names, st.Name)
		}
	}
	names = append(names, "seed", "check-linearizable")
	sort.Strings(names)
	return names
}()

// Setter sets a command's flag by name, as *flag.FlagSet does.
type Setter interface {
	Set(name, value string) error
}

// Apply sets the flags the file's settings, fail_on, expect and runs name, in a stable
// order, so that the command line's flags parsed after them win.
func (rf *File) Apply(fs Setter) error {
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
		if !slices.Contains(SaleSettings, n) {
			return fmt.Errorf("settings.%s: unknown setting (settings: %s)", n, strings.Join(SaleSettings, ", "))
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

// Plan is what the run file at path file names, its design files and adapters added
// to designs.
func (rf *File) Plan(file string, designs *catalog.Catalog) (bench.Plan, error) {
	for _, f := range rf.LockFiles {
		if err := designs.AddFile(relTo(file, f), true); err != nil {
			return bench.Plan{}, fmt.Errorf("lock_files: %w", err)
		}
	}
	for _, f := range rf.QueueFiles {
		if err := designs.AddFile(relTo(file, f), false); err != nil {
			return bench.Plan{}, fmt.Errorf("queue_files: %w", err)
		}
	}
	for _, e := range rf.LockExecs {
		if err := designs.AddExec(adapter.SupportsLock, e); err != nil {
			return bench.Plan{}, fmt.Errorf("lock_execs: %w", err)
		}
	}
	for _, e := range rf.QueueExecs {
		if err := designs.AddExec(adapter.SupportsQueue, e); err != nil {
			return bench.Plan{}, fmt.Errorf("queue_execs: %w", err)
		}
	}
	for _, e := range rf.BuyExecs {
		if err := designs.AddExec(adapter.SupportsBuy, e); err != nil {
			return bench.Plan{}, fmt.Errorf("buy_execs: %w", err)
		}
	}
	if rf.AdapterProcs < 0 {
		return bench.Plan{}, fmt.Errorf("adapter_procs: must not be negative, got %d", rf.AdapterProcs)
	}
	if rf.AdapterNodes < 0 || rf.AdapterNodes > catalog.MaxNodes {
		return bench.Plan{}, fmt.Errorf("adapter_nodes: must be 1 to %d, got %d", catalog.MaxNodes, rf.AdapterNodes)
	}
	designs.Procs, designs.Nodes = rf.AdapterProcs, rf.AdapterNodes
	p := bench.Plan{
		Locks:     names(designs.Locks(), func(i lockimpl.Impl) string { return i.Name }),
		Queues:    names(designs.Queues(), func(i queueimpl.Impl) string { return i.Name }),
		Scenarios: orList(rf.Scenarios, scenarios.DefaultMatrix), Faults: orList(rf.Faults, catalog.DefaultPlans(faults.Locks)),
		QueueScenarios: orList(rf.QueueScenarios, scenarios.DefaultQueueMatrix),
		QueueFaults:    orList(rf.QueueFaults, catalog.DefaultPlans(faults.Queues)),
		Fulfils:        orList(rf.Fulfils, catalog.Words(scenarios.Fulfils)),
	}
	if rf.Locks != nil {
		p.Locks = *rf.Locks
	}
	if rf.Queues != nil {
		p.Queues = *rf.Queues
	}
	return p, nil
}

// Checks reads the thresholds and the baseline of the run file at path file now, so
// that a bad one stops the check before it runs, and returns what judges the run
// (Judge) and the thresholds, for an exploration's reruns. designs are the run's.
func (rf *File) Checks(file string, designs []string) (bench.Afterword, gate.Thresholds, error) {
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
				return nil, nil, fmt.Errorf("%s[%d]: %q compares with %s, which this run does not run (designs: %s)", where, i, s, t.Ref, strings.Join(designs, ","))
			}
			th[sel] = append(th[sel], t)
		}
	}
	var base *results.File
	rules := gate.Defaults
	if rf.Baseline != "" {
		var err error
		if base, err = results.ReadRun(relTo(file, rf.Baseline)); err != nil {
			return nil, nil, fmt.Errorf("baseline: %w", err)
		}
		if rf.GateRules != "" {
			if rules, err = gate.ReadRules(relTo(file, rf.GateRules)); err == nil {
				err = rules.Validate()
			}
			if err != nil {
				return nil, nil, fmt.Errorf("gate_rules: %w", err)
			}
		}
	} else if rf.GateRules != "" {
		return nil, nil, errors.New("gate_rules: there is no baseline to gate against")
	}
	if len(th) == 0 && base == nil {
		return nil, nil, errors.New("nothing to check: give thresholds, a baseline, or both")
	}
	return func(f *results.File) bench.Reading { return Judge(f, th, base, rules) }, th, nil
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
	return fmt.Errorf("%s is no design of this run (designs: %s)", d, strings.Join(designs, ","))
}

// Judge applies thresholds th and the baseline base, when given, under rules to a
// finished run, records them in it, and returns the lines to print (each broken
// threshold and regression, then check's verdict) and how the check ends.
func Judge(f *results.File, th gate.Thresholds, base *results.File, rules gate.Rules) bench.Reading {
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
	verdict := func(code int, state, why string) bench.Reading {
		return bench.Reading{Lines: append(lines, "check: "+state+", "+why), Ending: bench.Ending{Code: code, Why: why}}
	}
	switch {
	case broken+regressions > 0:
		return verdict(bench.ExitFailed, "FAIL", fmt.Sprintf("%d of %d thresholds broken, %d regressions", broken, broken+held, regressions))
	case !f.Complete:
		return verdict(bench.ExitUnfinished, "FAIL", "the run did not finish: "+f.Incomplete)
	}
	return verdict(bench.ExitOK, "PASS", fmt.Sprintf("%d thresholds held on %d runs%s", held, len(f.Runs), against(base)))
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

func names[T any](impls []T, name func(T) string) []string {
	out := make([]string, len(impls))
	for i, impl := range impls {
		out[i] = name(impl)
	}
	return out
}
