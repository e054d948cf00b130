package scenarios

import (
	"errors"
	"fmt"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
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

// Defaults for QueueSale's zero fields.
const (
	DefaultWorkers    = 4
	DefaultVisibility = 500 * time.Millisecond
)

// QueueSale is a sale through a queue: each buyer enqueues one order, workers take the
// orders and fulfil them against the stock. Buyers must be set; zero fields take the
// defaults named in their comments.
type QueueSale struct {
	// Name labels the sale in results (a preset's name).
	Name string
	// Buyers is the number of buyers, each enqueuing one order.
	Buyers int
	// Stock is the number of units on sale.
	Stock int64
	// Workers is the number of workers. Default: DefaultWorkers.
	Workers int
	// Fulfil is how workers apply an order. Default: Naive.
	Fulfil Fulfil
	// Work is a worker's time on a task between taking and fulfilling it. Default: none.
	Work time.Duration
	// Visibility is how long a taken task stays with its worker before a design that
	// re-delivers hands it on. Default: DefaultVisibility.
	Visibility time.Duration
	// Rate is orders per second; zero sends every buyer at once (a closed rush).
	Rate float64
	// Conns is the connection pool each of buyers and workers use. Default: DefaultConns.
	Conns int
	// Prefix is put before every key the sale touches. Default: DefaultPrefix.
	Prefix string
	// Faults is what goes wrong. Default: nothing.
	Faults faults.Plan
	// Seed is recorded for symmetry with FlashSale; queue sales draw nothing at random.
	Seed uint64
	// KeyLease keeps a TTL on the sale's keys while it runs, as FlashSale.KeyLease does.
	// Default: none.
	KeyLease time.Duration
}

// WithDefaults returns s with its zero fields set.
func (s QueueSale) WithDefaults() QueueSale {
	if s.Workers == 0 {
		s.Workers = DefaultWorkers
	}
	if s.Fulfil == "" {
		s.Fulfil = Naive
	}
	if s.Visibility == 0 {
		s.Visibility = DefaultVisibility
	}
	if s.Conns == 0 {
		s.Conns = DefaultConns
	}
	if s.Prefix == "" {
		s.Prefix = DefaultPrefix
	}
	return s
}

// Validate says what is wrong with s.
func (s QueueSale) Validate() error {
	var errs []error
	check := func(bad bool, format string, args ...any) {
		if bad {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(s.Buyers <= 0, "buyers must be at least 1, got %d", s.Buyers)
	check(s.Stock < 0, "stock must not be negative, got %d", s.Stock)
	check(s.Workers < 0, "workers must be at least 1, got %d", s.Workers)
	check(s.Fulfil != "" && s.Fulfil != Naive && s.Fulfil != Idempotent, "unknown fulfil %q (known: naive, idempotent)", s.Fulfil)
	check(s.Visibility < 0, "visibility timeout must be positive, got %s", s.Visibility)
	check(!finite(s.Rate), "rate must be a finite number, got %g", s.Rate)
	check(s.Rate < 0, "rate must not be negative, got %g", s.Rate)
	check(s.KeyLease < 0, "key lease must not be negative, got %s", s.KeyLease)
	if k, ok := s.Faults.ForQueues(); !ok {
		check(true, "fault %s does not apply to a queue (queue faults: worker-crash, worker-crash-late, worker-pause, redis-restart)", k)
	}
	return errors.Join(errs...)
}

// queueKeys are the sale's keys: the stock store's and the queue's.
type queueKeys struct {
	stock                  lockimpl.Stock
	effects, refused, done string
	queue                  queueimpl.Keys
}

func (s QueueSale) keys() queueKeys {
	return queueKeys{
		stock:   lockimpl.NewStock(s.Prefix),
		effects: s.Prefix + ":effects", refused: s.Prefix + ":refused", done: s.Prefix + ":done",
		queue: queueimpl.NewKeys(s.Prefix),
	}
}

func (k queueKeys) stockKeys() []string {
	return append(k.stock.Keys(), k.effects, k.refused, k.done)
}
