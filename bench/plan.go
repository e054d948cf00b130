package bench

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// Plan is what a command or a run file asks to run, by name: every lock under every
// fault plan on every preset, then every queue likewise, once per fulfil.
type Plan struct {
	Locks, Scenarios, Faults                     []string
	Queues, QueueScenarios, QueueFaults, Fulfils []string
	// Headline are lock designs the headline preset runs, under its own faults, after
	// the rest ("default": scenarios.Headline).
	Headline []string
}

// Jobs checks every name and setting of p before anything starts, so that bad input
// never leaves a Redis behind or a results directory without results, and returns the
// jobs, with notes on what was left out and why (a design refused by a fault). Its
// errors are usage errors (UsageError).
func (p Plan) Jobs(c *catalog.Catalog, o catalog.Overrides) (jobs []Job, notes []string, err error) {
	lockJobs, notes, err := p.LockJobs(c, o)
	if err != nil {
		return nil, nil, UsageError(err)
	}
	queueJobs, more, err := p.queueJobs(c, o)
	if err != nil {
		return nil, nil, UsageError(err)
	}
	jobs, notes = append(lockJobs, queueJobs...), append(notes, more...)
	if names := p.Headline; len(names) > 0 {
		if len(names) == 1 && names[0] == "default" {
			names = scenarios.Headline
		}
		preset, _ := scenarios.Lookup("headline")
		more, moreNotes, err := Plan{Locks: names, Scenarios: []string{"headline"}, Faults: []string{preset.Faults.String()}}.LockJobs(c, o)
		if err != nil {
			return nil, nil, UsageError(err)
		}
		jobs, notes = append(jobs, more...), append(notes, moreNotes...)
	}
	if len(jobs) == 0 && len(notes) > 0 {
		return nil, nil, UsageError(errors.New(notes[0]))
	}
	if len(jobs) == 0 {
		return nil, nil, UsageError(fmt.Errorf("nothing to run: name at least one lock or queue, with a scenario and a fault plan"))
	}
	return jobs, notes, nil
}

// LockJobs are p's lock sales, as Jobs checks them.
func (p Plan) LockJobs(c *catalog.Catalog, o catalog.Overrides) (jobs []Job, notes []string, err error) {
	impls := make([]lockimpl.Impl, len(p.Locks))
	for i, l := range p.Locks {
		if impls[i], err = c.Lock(l); err != nil {
			return nil, nil, err
		}
	}
	plans, err := parsePlans(p.Faults)
	if err != nil {
		return nil, nil, err
	}
	for _, name := range p.Scenarios {
		preset, err := scenarios.Lookup(name)
		if err != nil {
			return nil, nil, err
		}
		sale := o.FlashSale(preset)
		for _, fp := range plans {
			sale.Faults = fp
			if err := sale.Validate(); err != nil {
				return nil, nil, err
			}
			for _, impl := range impls {
				if err := fitsExternal(o.External, fp, impl.LockNodes(), impl.Name); err != nil {
					return nil, nil, err
				}
				if err := cmp.Or(scenarios.Refused(impl.Name, impl.Outside, fp), sale.Takes(impl)); err != nil {
					notes = append(notes, err.Error())
					continue
				}
				jobs = append(jobs, LockJob{Sale: sale, Impl: impl})
			}
		}
	}
	return jobs, notes, nil
}

func (p Plan) queueJobs(c *catalog.Catalog, o catalog.Overrides) (jobs []Job, notes []string, err error) {
	impls := make([]queueimpl.Impl, len(p.Queues))
	for i, name := range p.Queues {
		if impls[i], err = c.Queue(name); err != nil {
			return nil, nil, err
		}
	}
	plans, err := parsePlans(p.QueueFaults)
	if err != nil {
		return nil, nil, err
	}
	if o.External {
		impls = slices.DeleteFunc(impls, func(impl queueimpl.Impl) bool {
			if impl.Own {
				notes = append(notes, fmt.Sprintf("queue %s left out: it writes keys of its own outside the run's prefix, so it runs only on servers the harness starts", impl.Name))
			}
			return impl.Own
		})
	}
	for _, name := range p.QueueScenarios {
		preset, err := scenarios.LookupQueue(name)
		if err != nil {
			return nil, nil, err
		}
		base := o.QueueSale(preset)
		for _, f := range p.Fulfils {
			for _, fp := range plans {
				sale := base
				sale.Fulfil, sale.Faults = scenarios.Fulfil(f), fp
				if err := sale.Validate(); err != nil {
					return nil, nil, err
				}
				for _, impl := range impls {
					if err := fitsExternal(o.External, fp, 1, impl.Name); err != nil {
						return nil, nil, err
					}
					if err := scenarios.Refused(impl.Name, impl.Outside, fp); err != nil {
						notes = append(notes, err.Error())
						continue
					}
					jobs = append(jobs, QueueJob{Sale: sale, Impl: impl})
				}
			}
		}
	}
	return jobs, notes, nil
}

func parsePlans(specs []string) ([]faults.Plan, error) {
	plans := make([]faults.Plan, len(specs))
	for i, spec := range specs {
		fp, err := faults.Parse(spec)
		if err != nil {
			return nil, err
		}
		plans[i] = fp
	}
	return plans, nil
}

// fitsExternal refuses, before anything starts, what the user's own Redis cannot do:
// the harness starts no servers beside it, and acts on none.
func fitsExternal(external bool, fp faults.Plan, nodes int, design string) error {
	if !external {
		return nil
	}
	n := fp.Needs()
	switch {
	case n.Owned || n.SeparateStock || n.Replica:
		return fmt.Errorf("fault %s acts on Redis servers the harness starts; it cannot run with --redis-url", fp)
	case nodes > 1:
		return fmt.Errorf("%s needs %d independent Redis servers the harness starts; it cannot run with --redis-url", design, nodes)
	}
	return nil
}
