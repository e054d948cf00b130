package bench

import (
	"context"
	"fmt"
	"io"

	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// job is one sale with one design.
type job interface {
	// describe is the progress line's account of the job.
	describe() string
	// design names the design, for messages.
	design() string
	// need is what the sale needs of the servers: its design's and its plan's.
	need() rig.Need
	// buyers is how many buyers the sale has.
	buyers() int
	// footprint estimates what the sale holds in memory, Redis here or not.
	footprint(redisHere bool) scenarios.Footprint
	// run runs the sale under prefix on r; a long sale reports its progress on
	// progress when that is a terminal.
	run(ctx context.Context, prefix string, r scenarios.Redis, progress io.Writer) (results.Run, error)
}

// lockJob is a flash sale through a lock design.
type lockJob struct {
	sale scenarios.FlashSale
	impl lockimpl.Impl
	// sweep, for a sale of a sweep, is where it sits.
	sweep *results.SweepPoint
}

func (j lockJob) describe() string {
	return fmt.Sprintf("%s with %s, faults %s: %d buyers, stock %d", j.sale.Name, j.impl.Name, j.sale.Faults, j.sale.Buyers, j.sale.Stock)
}
func (j lockJob) design() string { return j.impl.Name }
func (j lockJob) need() rig.Need {
	return rig.ForLock(j.impl, j.sale.Faults, j.sale.WithDefaults().Conns)
}
func (j lockJob) buyers() int { return j.sale.Buyers }
func (j lockJob) footprint(redisHere bool) scenarios.Footprint {
	return j.sale.Footprint(j.impl, redisHere)
}
func (j lockJob) run(ctx context.Context, prefix string, r scenarios.Redis, progress io.Writer) (results.Run, error) {
	s := j.sale
	s.Prefix = prefix
	defer showProgress(&s.Sale, progress)()
	run, err := s.Run(ctx, r, j.impl)
	run.Sweep = j.sweep
	return run, err
}

// queueJob is a sale through a queue design.
type queueJob struct {
	sale scenarios.QueueSale
	impl queueimpl.Impl
}

func (j queueJob) describe() string {
	s := j.sale.WithDefaults()
	return fmt.Sprintf("%s with %s (%s fulfil), faults %s: %d buyers, %d workers, stock %d",
		s.Name, j.impl.Name, s.Fulfil, s.Faults, s.Buyers, s.Workers, s.Stock)
}
func (j queueJob) design() string { return j.impl.Name }
func (j queueJob) need() rig.Need { return rig.ForQueue(j.sale.Faults, j.sale.WithDefaults().Conns) }
func (j queueJob) buyers() int    { return j.sale.Buyers }
func (j queueJob) footprint(redisHere bool) scenarios.Footprint {
	return j.sale.Footprint(redisHere)
}
func (j queueJob) run(ctx context.Context, prefix string, r scenarios.Redis, progress io.Writer) (results.Run, error) {
	s := j.sale
	s.Prefix = prefix
	defer showProgress(&s.Sale, progress)()
	return s.Run(ctx, r, j.impl)
}
