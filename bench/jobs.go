package bench

import (
	"context"
	"fmt"

	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/live"
	"github.com/stockbench/stockbench/scenarios"
)

// Job is one sale with one design: a LockJob or a QueueJob.
type Job interface {
	// describe is the progress line's account of the job.
	describe() string
	// design names the design, for messages.
	design() string
	// need is what the sale needs of the servers: its design's and its plan's.
	need() rig.Need
	// buyers is how many buyers the sale has.
	buyers() int
	// Footprint estimates what the sale holds in memory, Redis here or not.
	Footprint(redisHere bool) scenarios.Footprint
	// label names the sale on the dashboard.
	label() live.Sale
	// run runs the sale under prefix on r, reporting its progress to watch when set.
	run(ctx context.Context, prefix string, r scenarios.Redis, watch func(scenarios.Progress)) (results.Run, error)
}

// LockJob is a flash sale through a lock design.
type LockJob struct {
	Sale scenarios.FlashSale
	Impl lockimpl.Impl
	// Sweep, for a sale of a sweep, is where it sits.
	Sweep *results.SweepPoint
}

func (j LockJob) describe() string {
	if d := j.Sale.WithDefaults().Drop; d.On() {
		return fmt.Sprintf("%s with %s, faults %s: %d scheduler instances, stock %d in %d waves every %s",
			j.Sale.Name, j.Impl.Name, j.Sale.Faults, j.Sale.Buyers, j.Sale.Stock, d.Waves, d.Every)
	}
	return fmt.Sprintf("%s with %s, faults %s: %d buyers, stock %d", j.Sale.Name, j.Impl.Name, j.Sale.Faults, j.Sale.Buyers, j.Sale.Stock)
}
func (j LockJob) design() string { return j.Impl.Name }
func (j LockJob) need() rig.Need {
	return rig.ForLock(j.Impl, j.Sale.Faults, j.Sale.WithDefaults().Conns)
}
func (j LockJob) buyers() int { return j.Sale.Buyers }
func (j LockJob) Footprint(redisHere bool) scenarios.Footprint {
	return j.Sale.Footprint(j.Impl, redisHere)
}
func (j LockJob) label() live.Sale {
	return live.Sale{Scenario: j.Sale.Name, Design: j.Impl.Name, Faults: j.Sale.Faults.String()}
}
func (j LockJob) run(ctx context.Context, prefix string, r scenarios.Redis, watch func(scenarios.Progress)) (results.Run, error) {
	s := j.Sale
	s.Prefix, s.Progress = prefix, watch
	run, err := s.Run(ctx, r, j.Impl)
	run.Sweep = j.Sweep
	return run, err
}

// QueueJob is a sale through a queue design.
type QueueJob struct {
	Sale scenarios.QueueSale
	Impl queueimpl.Impl
}

func (j QueueJob) describe() string {
	s := j.Sale.WithDefaults()
	return fmt.Sprintf("%s with %s (%s fulfil), faults %s: %d buyers, %d workers, stock %d",
		s.Name, j.Impl.Name, s.Fulfil, s.Faults, s.Buyers, s.Workers, s.Stock)
}
func (j QueueJob) design() string { return j.Impl.Name }
func (j QueueJob) need() rig.Need { return rig.ForQueue(j.Sale.Faults, j.Sale.WithDefaults().Conns) }
func (j QueueJob) buyers() int    { return j.Sale.Buyers }
func (j QueueJob) Footprint(redisHere bool) scenarios.Footprint {
	return j.Sale.Footprint(redisHere)
}
func (j QueueJob) label() live.Sale {
	return live.Sale{Scenario: j.Sale.Name + " (" + string(j.Sale.WithDefaults().Fulfil) + " fulfil)", Design: j.Impl.Name, Faults: j.Sale.Faults.String()}
}
func (j QueueJob) run(ctx context.Context, prefix string, r scenarios.Redis, watch func(scenarios.Progress)) (results.Run, error) {
	s := j.Sale
	s.Prefix, s.Progress = prefix, watch
	return s.Run(ctx, r, j.Impl)
}
