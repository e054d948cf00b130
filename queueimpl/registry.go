package queueimpl

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/registry"
	"github.com/stockbench/stockbench/lockimpl"
)

// Env is what a design is built on.
type Env struct {
	// Client reaches the queue's server.
	Client redis.UniversalClient
	// Keys are the queue's keys.
	Keys Keys
	// Visibility is how long a taken task stays with its worker before a design that
	// re-delivers hands it on.
	Visibility time.Duration
	// Topology is lockimpl.Env.Topology, for a queue. Default: nil, a single server.
	Topology *lockimpl.Topology
}

// Impl is a queue design under a name: what it promises, and how to build it. A sale
// runs an Impl whether or not it is registered.
type Impl struct {
	// Name is what users pass to --queue.
	Name string
	// Summary says in one line how the design works.
	Summary string
	// Guarantee is "at most once", "at least once" or what else the design promises.
	Guarantee string
	// Ordered is set when the design promises to hand tasks out in Seq order.
	Ordered bool
	// New builds the design; Setup, if the queue has one, is run before the sale.
	New func(Env) Queue
	// Outside names the faults the design cannot take part in, which a sale refuses (see
	// lockimpl.Impl.Outside). Default: none.
	Outside []string
	// Own: the design writes keys of its own outside the sale's prefix (a library's
	// registry of queues and servers), so it runs only on servers the harness starts,
	// never on the user's own Redis. Default: false.
	Own bool
	// Documented is what the design documents it earns with each fulfil, as
	// lockimpl.Impl.Documented. Default: nothing documented.
	Documented Verdicts
}

// Setupper is a design that needs its keys prepared before the first order.
type Setupper interface {
	Setup(ctx context.Context) error
}

// Validate says what is wrong with impl as a design: it must have a constructor.
func (impl Impl) Validate() error {
	if impl.New == nil {
		return errors.New("a design needs New")
	}
	return nil
}

var designs = registry.New("queue", func(i Impl) string { return i.Name }, Impl.Validate)

// Register adds impl, so that list, run and matrix know it by name; it panics on a
// duplicate name or a missing constructor.
func Register(impl Impl) { designs.MustAdd(impl) }

// Lookup returns the design registered under name.
func Lookup(name string) (Impl, error) { return designs.Lookup(name) }

// All returns every registered design in registration order.
func All() []Impl { return designs.All() }

// Names returns the registered names.
func Names() []string { return designs.Names() }
