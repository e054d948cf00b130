// Package gate holds a run to a baseline for CI: hard gates on harm where a design is
// documented safe or the baseline had none, soft gates on throughput and tail latency,
// as ratios to a reference design measured in the same run.
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// Rules are what a gate holds a run to. Defaults documents the defaults; a
// gate file (JSON) names only the fields it changes.
type Rules struct {
	// Reference is the implementation soft gates divide by, measured in the same run and
	// scenario, so that a slower runner moves both sides of the ratio. "" compares
	// absolute figures. The reference itself is then not soft-gated.
	Reference string `json:"reference"`
	// QueueReference is the same for queue sales.
	QueueReference string `json:"queue_reference"`
	// MaxThroughputDrop is the largest fall in sales/s (as a share, 0.3 = 30%) that passes.
	MaxThroughputDrop float64 `json:"max_throughput_drop"`
	// MaxP99Rise and MaxP999Rise are the largest rises in p99 and p99.9 latency that pass.
	MaxP99Rise  float64 `json:"max_p99_rise"`
	MaxP999Rise float64 `json:"max_p999_rise"`
	// Soft is how the soft rules judge speed: SoftTest tests a change against the
	// spread of several runs of each side (matrix --repeat), and falls back to the
	// tolerances for a sale either side ran once; SoftTolerance holds every sale to the
	// tolerances below.
	Soft string `json:"soft"`
	// Alpha is the one-sided p-value below which SoftTest counts a change significant.
	Alpha float64 `json:"alpha"`
	// MinEffect is the smallest change SoftTest flags: of the median latency (a rise) or
	// of sales/s (a fall), as a share, both as ratios to the reference design.
	MinEffect float64 `json:"min_effect"`
	// MinCommands is the smallest rise in the commands Redis ran per sale that the paired
	// gate (--base) flags, where the pairs show it significant at Alpha: 1 is one more
	// round trip on every purchase's path, 0.5 on every other. A count does not move with
	// a busy runner as a time does, and one round trip on loopback is tens of
	// microseconds, below what the times tell from a neighbour's noise.
	MinCommands float64 `json:"min_commands"`
	// MinSamples is the fewest sales (latency samples) a run needs, in the baseline and
	// now, reference included, for its soft gates: the p99.9 of a hundred purchases is one
	// purchase, and the sales/s of a 30-unit sale is mostly its start-up.
	MinSamples int64 `json:"min_samples"`
	// SoftUnderFaults also soft-gates runs with a fault plan; their timings are mostly
	// the fault's.
	SoftUnderFaults bool `json:"soft_under_faults"`
	// Ignore lists runs no gate looks at, as scenario/design/fault patterns (path.Match,
	// so "*/redlock/*" ignores every redlock run).
	Ignore []string `json:"ignore"`
	// SpeedInfo tells the soft gates' findings as notes, not regressions: the speed is
	// judged elsewhere (gate --base, both builds timed in one job).
	SpeedInfo bool `json:"-"`
}

// Defaults are generous enough for a shared 2-core runner, where back-to-back
// runs of one build differ by tens of percent in their tails.
var Defaults = Rules{
	Reference: "lua", QueueReference: "list", MaxThroughputDrop: 0.3, MaxP99Rise: 0.5, MaxP999Rise: 1.0, MinSamples: 200,
	Soft: SoftTest, Alpha: 0.01, MinEffect: 0.2, MinCommands: 0.5,
}

// The ways the soft rules judge speed (Rules.Soft).
const (
	SoftTest      = "test"
	SoftTolerance = "tolerance"
)

// ReadRules reads a gate file over the defaults.
func ReadRules(file string) (Rules, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Defaults, fmt.Errorf("gate: %w", err)
	}
	r, err := DecodeRules(b)
	if err != nil {
		return r, fmt.Errorf("gate: %s: %w", file, err)
	}
	return r, nil
}

// DecodeRules reads gate rules over the defaults from b: one JSON object that names
// only the fields it changes, none unknown, and nothing after it.
func DecodeRules(b []byte) (Rules, error) {
	r := Defaults
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return Defaults, err
	}
	if dec.More() {
		return Defaults, errors.New("more than one JSON value")
	}
	return r, r.Validate()
}

// Validate refuses tolerances that cannot be meant.
func (g Rules) Validate() error {
	for name, v := range map[string]float64{"max_throughput_drop": g.MaxThroughputDrop, "max_p99_rise": g.MaxP99Rise, "max_p999_rise": g.MaxP999Rise} {
		if !(v >= 0) || math.IsInf(v, 0) || (name == "max_throughput_drop" && v > 1) { // NaN fails >= 0
			return fmt.Errorf("gate: %s %v is out of range", name, v)
		}
	}
	for _, p := range g.Ignore {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("gate: ignore pattern %q: %w", p, err)
		}
	}
	if g.Soft != SoftTest && g.Soft != SoftTolerance {
		return fmt.Errorf("gate: soft %q: want %q or %q", g.Soft, SoftTest, SoftTolerance)
	}
	if !(g.Alpha > 0 && g.Alpha < 1) {
		return fmt.Errorf("gate: alpha %v: want it between 0 and 1", g.Alpha)
	}
	if !(g.MinEffect >= 0 && g.MinEffect < 1) {
		return fmt.Errorf("gate: min_effect %v: want it from 0 to below 1", g.MinEffect)
	}
	if !(g.MinCommands > 0) || math.IsInf(g.MinCommands, 0) {
		return fmt.Errorf("gate: min_commands %v: want a number of commands above 0", g.MinCommands)
	}
	if g.MinSamples < 0 {
		return fmt.Errorf("gate: min_samples %d is negative", g.MinSamples)
	}
	return nil
}

// Result is what a gate found: regressions fail it, notes do not.
type Result struct {
	Compared    int
	Regressions []string
	Notes       []string
}

// reference is the design r's soft gates divide by, "" for none.
func (g Rules) reference(r *results.Run) string {
	if r.Kind == "queue" {
		return g.QueueReference
	}
	return g.Reference
}

// Passed reports whether no regression was found.
func (g Result) Passed() bool { return len(g.Regressions) == 0 }

// Compare compares current with baseline under rules.
func Compare(baseline, current *results.File, rules Rules) Result {
	var res Result
	if why := otherMachine(baseline, current); why != "" && !rules.SpeedInfo {
		rules.SpeedInfo = true
		res.Notes = append(res.Notes, "the baseline was recorded on another machine ("+why+"): its speed is information here, never a regression; gate --base times this build against another on this machine")
	}
	base := make(map[string]*results.Run)
	for i := range baseline.Runs {
		base[baseline.Runs[i].Key()] = &baseline.Runs[i]
	}
	seen := make(map[string]bool)
	for i := range current.Runs {
		r := &current.Runs[i]
		key := r.Key()
		seen[key] = true
		if rules.ignored(key) {
			continue
		}
		res.Compared++
		b := base[key]
		if b == nil {
			res.Notes = append(res.Notes, key+": not in the baseline; hard gates on its documented verdict only")
		}
		regs, notes := hardGates(key, r, b)
		res.Regressions, res.Notes = append(res.Regressions, regs...), append(res.Notes, notes...)
		if b != nil {
			res.Regressions = append(res.Regressions, rateGates(key, r, b)...)
			regs, notes := softGates(key, r, b, current, baseline, rules)
			if rules.SpeedInfo {
				for _, r := range regs {
					notes = append(notes, "speed against the baseline, for information: "+r)
				}
				regs = nil
			}
			res.Regressions, res.Notes = append(res.Regressions, regs...), append(res.Notes, notes...)
		}
	}
	for i := range baseline.Runs {
		if key := baseline.Runs[i].Key(); !seen[key] && !rules.ignored(key) {
			res.Regressions = append(res.Regressions, key+": in the baseline but not in this run")
		}
	}
	return res
}

// otherMachine says how the machine and Redis target of base differ from cur's, "" when
// they do not: speed recorded on another CPU, or against another server, says nothing of
// a change.
func otherMachine(base, cur *results.File) string {
	var diff []string
	b, c := base.Host, cur.Host
	if b.CPUModel != c.CPUModel {
		diff = append(diff, fmt.Sprintf("CPU %q, here %q", b.CPUModel, c.CPUModel))
	}
	if b.CPUs != c.CPUs {
		diff = append(diff, fmt.Sprintf("%d CPUs, here %d", b.CPUs, c.CPUs))
	}
	if bt, ct := base.Target, cur.Target; bt.Kind != ct.Kind || bt.Version != ct.Version {
		diff = append(diff, fmt.Sprintf("Redis %s %s, here %s %s", bt.Kind, bt.Version, ct.Kind, ct.Version))
	}
	return strings.Join(diff, "; ")
}

func (g Rules) ignored(key string) bool {
	return slices.ContainsFunc(g.Ignore, func(p string) bool { ok, _ := path.Match(p, key); return ok })
}
