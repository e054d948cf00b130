package gate

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/stockbench/stockbench/results"
)

// Flag is a rule a command line may set over the gate file's: its flag's name, its
// usage, and how a value is written into Rules.
type Flag struct {
	Name, Usage string
	// Switch marks a boolean flag, given bare.
	Switch bool
	Set    func(r *Rules, v string) error
}

// Flags are the rules gate's flags set, each described once; their defaults are
// Defaults'.
var Flags = func() []Flag {
	d := Defaults
	text := func(set func(*Rules, string)) func(*Rules, string) error {
		return func(r *Rules, v string) error { set(r, v); return nil }
	}
	share := func(set func(*Rules, float64)) func(*Rules, string) error {
		return func(r *Rules, v string) error {
			x, err := strconv.ParseFloat(v, 64)
			if err == nil {
				set(r, x)
			}
			return err
		}
	}
	return []Flag{
		{Name: "reference", Usage: fmt.Sprintf("soft gates compare ratios to this `design` in the same run; \"\" for absolute figures (default %q)", d.Reference),
			Set: text(func(r *Rules, s string) { r.Reference = s })},
		{Name: "queue-reference", Usage: fmt.Sprintf("the same `design` for queue sales (default %q)", d.QueueReference),
			Set: text(func(r *Rules, s string) { r.QueueReference = s })},
		{Name: "max-throughput-drop", Usage: fmt.Sprintf("largest fall in sales/s that passes, a `share`: 0.3 = 30%% (default %g)", d.MaxThroughputDrop),
			Set: share(func(r *Rules, v float64) { r.MaxThroughputDrop = v })},
		{Name: "max-p99-rise", Usage: fmt.Sprintf("largest rise in p99 latency that passes, a `share` (default %g)", d.MaxP99Rise),
			Set: share(func(r *Rules, v float64) { r.MaxP99Rise = v })},
		{Name: "max-p999-rise", Usage: fmt.Sprintf("largest rise in p99.9 latency that passes, a `share` (default %g)", d.MaxP999Rise),
			Set: share(func(r *Rules, v float64) { r.MaxP999Rise = v })},
		{Name: "min-samples", Usage: fmt.Sprintf("fewest latency samples (`n`) a percentile is gated on (default %d)", d.MinSamples),
			Set: func(r *Rules, v string) (err error) { r.MinSamples, err = strconv.ParseInt(v, 10, 64); return err }},
		{Name: "soft", Usage: fmt.Sprintf("how speed is judged: %q (a change beyond --min-effect and significant at --alpha over the runs of --repeat; a sale run once on a side falls to the tolerances) or %q (the tolerances only) (default %q)", SoftTest, SoftTolerance, d.Soft),
			Set: text(func(r *Rules, s string) { r.Soft = s })},
		{Name: "alpha", Usage: fmt.Sprintf("one-sided p-value below which --soft test counts a change significant (default %g)", d.Alpha),
			Set: share(func(r *Rules, v float64) { r.Alpha = v })},
		{Name: "min-effect", Usage: fmt.Sprintf("smallest change --soft test flags: a rise of the median latency or a fall of sales/s, a `share` (default %g)", d.MinEffect),
			Set: share(func(r *Rules, v float64) { r.MinEffect = v })},
		{Name: "min-commands", Usage: fmt.Sprintf("smallest rise in Redis commands per sale the paired gate (--base) flags, a `number`: 1 is one more round trip per purchase (default %g)", d.MinCommands),
			Set: share(func(r *Rules, v float64) { r.MinCommands = v })},
		{Name: "soft-under-faults", Usage: "soft-gate runs with a fault plan too", Switch: true,
			Set: func(r *Rules, v string) (err error) { r.SoftUnderFaults, err = strconv.ParseBool(v); return err }},
	}
}()

// Register adds Flags to fs; given collects each rule set on the command line, in
// order, for Load.
func Register(fs *flag.FlagSet) (given *[][2]string) {
	given = new([][2]string)
	for _, f := range Flags {
		set := func(v string) error {
			if err := f.Set(new(Rules), v); err != nil {
				return err
			}
			*given = append(*given, [2]string{f.Name, v})
			return nil
		}
		if f.Switch {
			fs.BoolFunc(f.Name, f.Usage, set)
		} else {
			fs.Func(f.Name, f.Usage, set)
		}
	}
	return given
}

// Load is the rules of gate file file ("" for none) over Defaults, with the flags given
// (name and value, in order) over those, checked.
func Load(file string, given [][2]string) (Rules, error) {
	rules := Defaults
	if file != "" {
		var err error
		if rules, err = ReadRules(file); err != nil {
			return rules, err
		}
	}
	for _, g := range given {
		for _, f := range Flags {
			if f.Name == g[0] {
				if err := f.Set(&rules, g[1]); err != nil {
					return rules, fmt.Errorf("--%s: %w", g[0], err)
				}
			}
		}
	}
	return rules, rules.Validate()
}

// Report compares cur with base under rules and writes what the gate says: the runs
// compared, notes, one line per regression, and PASS or FAIL. It reports whether the
// gate passed; an error is a record no gate reads (a shard's partial one).
func Report(w io.Writer, base, cur *results.File, rules Rules) (bool, error) {
	for _, f := range []*results.File{base, cur} {
		for _, r := range f.Runs {
			if r.Shard != nil && !r.Shard.Merged {
				return false, fmt.Errorf("%s holds shard %d of %d, a partial record: gate the merge of its shards (stockbench merge)", f.ID, r.Shard.Index, r.Shard.Count)
			}
		}
	}
	res := Compare(base, cur, rules)
	fmt.Fprintf(w, "gate: %s against baseline %s: %d runs compared (reference: %s)\n", cur.ID, base.ID, res.Compared, refs(rules))
	for _, n := range res.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	for _, r := range res.Regressions {
		fmt.Fprintln(w, "REGRESSION:", r)
	}
	if !res.Passed() {
		fmt.Fprintf(w, "gate: FAIL, %d regressions\n", len(res.Regressions))
		return false, nil
	}
	fmt.Fprintln(w, "gate: PASS")
	return true, nil
}

// refs names the gate's reference designs for its first line.
func refs(g Rules) string {
	if g.Reference == "" && g.QueueReference == "" {
		return "none, absolute figures"
	}
	return fmt.Sprintf("%s for locks, %s for queues", cmp.Or(g.Reference, "none"), cmp.Or(g.QueueReference, "none"))
}
