package catalog

import (
	"strings"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// Overrides are what a sale's flags write over its preset: settings by their flags'
// names (scenarios.Settings), in the order given, then the seed and the
// linearizability check.
type Overrides struct {
	Settings []results.Setting
	Seed     uint64
	Linear   bool
	// External marks a run on the user's own Redis: its keys carry a lease
	// (scenarios.DefaultKeyLease), and what needs servers the harness starts is refused.
	External bool
}

// FlashSale is preset s with o written into it; the settings must have been checked
// (scenarios.Setting.Check).
func (o Overrides) FlashSale(s scenarios.FlashSale) scenarios.FlashSale {
	for _, g := range o.Settings {
		_ = scenarios.SetLock(&s, g.Name, g.Value)
	}
	s.Seed, s.CheckLinearizable = o.Seed, o.Linear
	if o.External {
		s.KeyLease = scenarios.DefaultKeyLease
	}
	return s
}

// QueueSale is preset s with o written into it.
func (o Overrides) QueueSale(s scenarios.QueueSale) scenarios.QueueSale {
	for _, g := range o.Settings {
		_ = scenarios.SetQueue(&s, g.Name, g.Value)
	}
	s.Seed = o.Seed
	if o.External {
		s.KeyLease = scenarios.DefaultKeyLease
	}
	return s
}

// DefaultPlans is a matrix's fault plans for sales of a: none, then each fault of the
// default matrix.
func DefaultPlans(a faults.Applies) []string {
	return append([]string{faults.None}, Words(faults.MatrixKinds(a))...)
}

// InfraPlans is the --infra matrix's fault plans for sales of a: the faults of the
// Sentinel group, then a restart in each persistence mode that keeps data.
func InfraPlans(a faults.Applies) []string {
	plans := Words(faults.InfraKinds(a))
	for _, p := range faults.Persistences[1:] {
		plans = append(plans, faults.Fault{Kind: faults.RedisRestart, Persist: p}.String())
	}
	return plans
}

// Words writes a vocabulary's values as the strings a command line takes.
func Words[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Join is names as one comma-separated list, as flags take them.
func Join(names []string) string { return strings.Join(names, ",") }

// Split reads a comma-separated list, as flags take them: spaces trimmed, empty items
// dropped.
func Split(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}
