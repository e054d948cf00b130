// Package queueimpl holds the queue designs stockbench puts under load: buyers enqueue
// orders, workers take them and fulfil them, and each design promises something about
// what a worker that dies or stalls leaves behind (nothing, the task again, or a race).
//
// A design is a [Queue]: Enqueue an [Order], Dequeue a [Task], Ack it where the design
// has acknowledgement. Designs that hand a silent worker's task to another worker after a
// visibility timeout either do it inside Dequeue or are a [Reaper] the caller runs.
package queueimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
)

// ErrEmpty is returned by Dequeue when no task came within the wait.
var ErrEmpty = errors.New("queueimpl: empty")

// ErrWorkerGone is returned (wrapped) by a Task's Ack when the process that held the
// task exited of its own accord before the ack, as Laravel's worker kills itself once a
// job outlasts its --timeout: the worker died holding the task, after its work, and
// what becomes of the task is its library's affair. A process a fault signaled is not
// gone this way.
var ErrWorkerGone = errors.New("the worker's process exited holding the task")

// Order is what a buyer enqueues.
type Order struct {
	// ID names the order; unique per order.
	ID string
	// Seq is the order's place in line: the score of the sorted-set designs, the entry id
	// of a stream (set by Redis), the arrival number the buyer drew otherwise.
	Seq int64
}

// Queue is a queue design.
type Queue interface {
	// Enqueue adds o.
	Enqueue(ctx context.Context, o Order) error
	// Dequeue gives worker the next task, waiting up to wait for one; ErrEmpty if none.
	Dequeue(ctx context.Context, worker string, wait time.Duration) (Task, error)
	// Len is how many tasks are waiting or taken and not yet acknowledged.
	Len(ctx context.Context) (int64, error)
}

// Task is an order a worker took.
type Task interface {
	Order() Order
	// Ack marks the task done; a design without acknowledgement does nothing.
	Ack(ctx context.Context) error
}

// Reaper is a design whose tasks, taken by a worker that then went silent for longer
// than the visibility timeout, go back in line when Reap runs.
type Reaper interface {
	Reap(ctx context.Context) (requeued int, err error)
}

// Classed is a design whose keys fall in classes an eviction can take one at a time
// (faults.EvictLease, faults.EvictJob): the sale evicts what ClassKeys names while a
// worker holds o.
type Classed interface {
	// ClassKeys names the keys of class that hold what the design keeps of o (a key
	// shared by every task, as a lease set, included); none if it keeps no such key.
	ClassKeys(class faults.KeyClass, o Order) []string
}

// Churner is a design whose workers are consumers of a group, each under its worker's
// name (a stream's consumer group): faults.ConsumerChurn has the sale delete a dead
// worker's consumer, as a cleanup of gone consumers does.
type Churner interface {
	// DeleteConsumer removes worker's consumer from the group and says how many entries
	// it had pending, which go with it.
	DeleteConsumer(ctx context.Context, worker string) (pending int64, err error)
}

// Keys names a queue's Redis keys under a prefix (which should hold a hash tag).
type Keys struct {
	Queue, Processing, Taken, Lock string
}

// NewKeys names the keys under prefix.
func NewKeys(prefix string) Keys {
	return Keys{Queue: prefix + ":queue", Processing: prefix + ":processing", Taken: prefix + ":taken", Lock: prefix + ":qlock"}
}

// All lists every key.
func (k Keys) All() []string { return []string{k.Queue, k.Processing, k.Taken, k.Lock} }

// Entry encodes o as a list element: "seq:id".
func (o Order) Entry() string { return strconv.FormatInt(o.Seq, 10) + ":" + o.ID }

// ParseEntry decodes what Entry encoded.
func ParseEntry(s string) (Order, error) {
	seq, id, ok := strings.Cut(s, ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil {
		return Order{}, fmt.Errorf("queueimpl: malformed entry %q", s)
	}
	return Order{ID: id, Seq: n}, nil
}

// noAck is a task of a design without acknowledgement.
type noAck struct{ o Order }

func (t noAck) Order() Order              { return t.o }
func (t noAck) Ack(context.Context) error { return nil }

// blocking sends a blocking command whose last argument is a timeout in seconds, which
// Redis reads to the millisecond; go-redis's typed commands round it up to a second,
// which would keep a worker waiting that long after the sale ends.
func blocking(ctx context.Context, c redis.UniversalClient, wait time.Duration, args ...any) *redis.Cmd {
	return c.Do(ctx, append(args, strconv.FormatFloat(wait.Seconds(), 'f', 3, 64))...)
}

// Starter is a queue design with something to start before a sale and stop after it: a
// pool of processes of another language's queue (see adapters/PROTOCOL.md). The sale
// calls Start once its keys are known, and Stop when it ends, which returns the last of
// what the design's processes logged.
type Starter interface {
	Start(ctx context.Context, s Sale) error
	Stop() (log string)
}

// Documenter is lockimpl.Documenter for a queue: what a design documents, said once it
// runs, in place of Impl.Documented.
type Documenter interface {
	Documented() Verdicts
}

// Sale is what a Starter is told of the sale it serves.
type Sale struct {
	Keys       Keys
	Visibility time.Duration
	// Conns is the sale's connection pool, which a pool of processes matches.
	Conns int
	// Steps are the steps of a library's own worker loop that the sale's faults strike
	// at (faults.StepTerm); Stepped hears each report of one (with where the worker is)
	// and says whether to send that process a deploy's SIGTERM, and the grace before
	// its SIGKILL (faults.Injector.Stepped).
	Steps   []string
	Stepped func(step, where string) (grace time.Duration, strike bool)
}
