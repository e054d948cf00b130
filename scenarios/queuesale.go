package scenarios

import (
	"context"
	"errors"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// Fulfil is how a worker applies an order to the stock.
type Fulfil string

// The fulfils. Both check and decrement the stock in one script, so neither oversells;
// they differ in what a second delivery of the same order does.
const (
	// Naive applies every delivery: a task delivered twice is fulfilled twice.
	Naive Fulfil = "naive"
	// Idempotent remembers the orders it fulfilled and applies each once.
	Idempotent Fulfil = "idempotent"
)

// Fulfils lists the fulfils, in the order a matrix shows them.
var Fulfils = []Fulfil{Naive, Idempotent}

// Defaults for QueueSale's zero fields.
const (
	DefaultWorkers    = 4
	DefaultVisibility = 500 * time.Millisecond
)

// QueueSale is a sale through a queue: each buyer enqueues one order, workers take the
// orders and fulfil them against the stock. Buyers must be set; zero fields take the
// defaults named in their comments.
type QueueSale struct {
	Sale
	// Workers is the number of workers. Default: DefaultWorkers.
	Workers int
	// Fulfil is how workers apply an order. Default: Naive.
	Fulfil Fulfil
	// Work is a worker's time on a task between taking and fulfilling it. Default: none.
	Work time.Duration
	// Visibility is how long a taken task stays with its worker before a design that
	// re-delivers hands it on. Default: DefaultVisibility.
	Visibility time.Duration
}

// WithDefaults returns s with its zero fields set.
func (s QueueSale) WithDefaults() QueueSale {
	s.Sale = s.Sale.withDefaults()
	if s.Workers == 0 {
		s.Workers = DefaultWorkers
	}
	if s.Fulfil == "" {
		s.Fulfil = Naive
	}
	if s.Visibility == 0 {
		s.Visibility = DefaultVisibility
	}
	return s
}

// Validate says what is wrong with s.
func (s QueueSale) Validate() error {
	errs := s.Sale.validate(faults.Queues)
	check := checker(&errs)
	check(s.Workers < 0, "workers must be at least 1, got %d", s.Workers)
	check(s.Fulfil != "" && s.Fulfil != Naive && s.Fulfil != Idempotent, "unknown fulfil %q (known: %s, %s)", s.Fulfil, Naive, Idempotent)
	check(s.Visibility < 0, "visibility timeout must be positive, got %s", s.Visibility)
	check(s.Work < 0, "work must not be negative, got %s", s.Work)
	check(s.Faults.Servers() > 1, "fault %s strikes %d servers; a queue sale runs on one", s.Faults, s.Faults.Servers())
	return errors.Join(errs...)
}

// Run runs the queue sale on r, the queue on r.Locks[0] and the stock on r.Stock, with
// impl, which need not be registered, and returns its record. It touches only keys under
// s.Prefix and deletes them at the end. It ends once every accepted order was fulfilled
// or refused, or when no task has been taken for a little over twice the visibility
// timeout (what is left then is lost); when ctx ends early, as FlashSale.Run does.
func (s QueueSale) Run(ctx context.Context, r Redis, impl queueimpl.Impl) (results.Run, error) {
	p, err := s.RunPart(ctx, r, impl)
	return p.Run, err
}

// RunPart runs s as Run does and returns its record; for one shard of a sharded queue
// sale (s.Shard), its partial record for Merge: its orders, its workers' takes (of any shard's orders) and, from the
// first shard, what Redis held once every shard was done.
func (s QueueSale) RunPart(ctx context.Context, r Redis, impl queueimpl.Impl) (results.Part, error) {
	if err := s.Validate(); err != nil {
		return results.Part{}, err
	}
	if err := admit(impl.Name, impl.Validate(), impl.Outside, s.Faults); err != nil {
		return results.Part{}, err
	}
	s, r = s.WithDefaults(), r.withDefaults()
	if err := r.check(1, impl.Name); err != nil {
		return results.Part{}, err
	}
	run, qs, err := s.run(ctx, r, impl)
	p := results.Part{Run: run}
	if qs != nil {
		p.Queue, p.QueueFinal = qs.ledger, qs.final
	}
	return p, err
}

func (s QueueSale) run(ctx context.Context, r Redis, impl queueimpl.Impl) (run results.Run, qs *queueRun, err error) {
	run, err = runSale(ctx, s.Sale, r, s.Visibility, func(inj *faults.Injector) kind {
		qs = newQueueRun(s, r, impl, inj)
		return qs
	})
	return run, qs, err
}

// queueKeys are the sale's keys: the stock store's and the queue's, and those in which
// the shards of a sharded sale count together: the orders accepted, the shards whose
// buyers have all sent theirs, the orders settled and the tasks taken.
type queueKeys struct {
	stock                  lockimpl.Stock
	effects, refused, done string
	queue                  queueimpl.Keys
	accepted, sent         string
	settled, taken         string
}

func (s QueueSale) keys() queueKeys {
	return queueKeys{
		stock:   lockimpl.NewStock(s.Prefix),
		effects: s.Prefix + ":effects", refused: s.Prefix + ":refused", done: s.Prefix + ":done",
		queue:    queueimpl.NewKeys(s.Prefix),
		accepted: s.Prefix + ":shards:accepted", sent: s.Prefix + ":shards:sent",
		settled: s.Prefix + ":shards:settled", taken: s.Prefix + ":shards:taken",
	}
}

func (k queueKeys) stockKeys() []string {
	return append(k.stock.Keys(), k.effects, k.refused, k.done, k.accepted, k.sent, k.settled, k.taken)
}
