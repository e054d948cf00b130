package findings

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/bench/runfile"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// Designs is an exploration of the designs of cat named locks or queues (naming none,
// those of its files and adapters): their sales at their preset, checked, and the space
// of their kind, drawing the faults only names (comma-separated; "" for all, none for
// timings and loads alone), on a Sentinel group or a Cluster too when infra is set.
// redis is where Redis comes from, as flags, for the sales' records.
func Designs(cat *catalog.Catalog, locks, queues []string, only string, infra bool, redis []string) (explore.Config, error) {
	if len(locks) == 0 && len(queues) == 0 {
		// The designs of the files and adapters given, as run takes one alone.
		for _, l := range cat.Locks() {
			locks = append(locks, l.Name)
		}
		if len(locks) == 0 {
			for _, q := range cat.Queues() {
				queues = append(queues, q.Name)
			}
		}
	}
	var cfg explore.Config
	switch {
	case len(locks) > 0 && len(queues) > 0:
		return cfg, errors.New("explore: --lock and --queue exclude each other: designs compared must sell alike")
	case len(locks)+len(queues) == 0:
		return cfg, fmt.Errorf("explore: name a design with --lock or --queue (locks: %s; queues: %s)", catalog.Join(cat.LockNames()), catalog.Join(cat.QueueNames()))
	}
	p := bench.Plan{Locks: locks, Scenarios: []string{"fault-sale"}, Faults: []string{faults.None}}
	kind := results.LockSale
	if len(queues) > 0 {
		p = bench.Plan{Queues: queues, QueueScenarios: []string{"queue-sale"}, QueueFaults: []string{faults.None}, Fulfils: []string{"naive"}}
		kind = results.QueueSale
	}
	jobs, _, err := p.Jobs(cat, catalog.Overrides{Seed: 1, External: (&results.Sale{Redis: redis}).External()})
	if err != nil {
		return cfg, err
	}
	for _, j := range jobs {
		s := bench.SaleOf(cat, j)
		s.Redis = redis
		cfg.Designs = append(cfg.Designs, *s)
	}
	if only == faults.None { // timings and loads alone
		cfg.Space = explore.NewSpace(kind, infra, nil)
		cfg.Space.Faults = nil
		return cfg, nil
	}
	var kinds []faults.Kind
	for _, k := range catalog.Split(only) {
		if _, ok := faults.Lookup(faults.Kind(k)); !ok {
			return cfg, fmt.Errorf("explore: --faults: unknown fault %q (known: %s)", k, explore.AllFaults())
		}
		kinds = append(kinds, faults.Kind(k))
	}
	cfg.Space = explore.NewSpace(kind, infra, kinds)
	if len(kinds) > 0 && len(cfg.Space.Faults) == 0 {
		return cfg, fmt.Errorf("explore: --faults: none of %s applies to %s sales", only, kind)
	}
	return cfg, nil
}

// OfRunFile is a run file's exploration of the designs of p (its locks, or else its
// queues), checked: as explore's flags would make it. redis is where Redis comes from,
// as the command line says it.
func OfRunFile(x *runfile.Explore, cat *catalog.Catalog, p bench.Plan, redis []string) (explore.Config, error) {
	budget, err := time.ParseDuration(x.Budget)
	if err != nil {
		return explore.Config{}, fmt.Errorf("budget: %w", err)
	}
	locks, queues := p.Locks, []string(nil)
	if len(locks) == 0 {
		queues = p.Queues
	}
	cfg, err := Designs(cat, locks, queues, strings.Join(x.Faults, ","), false, redis)
	if err != nil {
		return cfg, err
	}
	confirm := cmp.Or(x.Confirm, explore.DefaultConfirm)
	if err := Limits(budget, confirm, explore.DefaultParallel); err != nil {
		return cfg, err
	}
	cfg.Budget, cfg.Seed, cfg.Confirm, cfg.Parallel = budget, x.Seed, confirm, explore.DefaultParallel
	return cfg, nil
}
