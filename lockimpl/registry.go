package lockimpl

import (
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/registry"
)

// Env is what a design is built on.
type Env struct {
	// Locks are the lock servers: Impl.Nodes independent ones (one for most designs).
	Locks []redis.UniversalClient
	// Stock is the server that holds the stock; lock-free designs work on it alone.
	Stock redis.UniversalClient
	// Retry is the buyers' loop, for designs that retry inside a purchase (watch).
	Retry Retry
	// Topology, when the sale's Redis is a Sentinel group or a cluster, says how a client
	// of the design's own reaches it (a process adapter dials Redis itself). Default:
	// nil, a single server.
	Topology *Topology
}

// Topology is how a client that follows a Sentinel group or a cluster itself reaches it:
// the sentinels' addresses and the master's name, or the cluster's seed nodes.
type Topology struct {
	Sentinels []string
	Master    string
	Cluster   []string
}

// Impl is a design under a name: what it is, and how to build it. Exactly one of
// NewLocker and NewPurchaser is set. A sale runs an Impl whether or not it is
// registered.
type Impl struct {
	// Name is what users pass to --lock.
	Name string
	// Summary says in one line how the design works.
	Summary string
	// Nodes is how many independent lock servers the design uses. Default: 1.
	Nodes int
	// OwnerRelease: the release frees the lock only while it is still the holder's (its
	// token compared in one script), so that a late release cannot free a lock another
	// holder took since. Default: false, a bare DEL.
	OwnerRelease bool
	// Renews: a holder renews its lease while it works (a watchdog), so that a lock
	// outlives slow work. Default: false.
	Renews bool
	// Replicas is how many replicas its lock server must have (WAIT for them): the
	// harness gives such a design a lock server of its own with a replica. Default: 0.
	Replicas int
	// Retry, when set, adjusts the buyers' retry loop to what the design's algorithm
	// prescribes (Redlock's random retry delay). Default: the sale's loop as it is.
	Retry func(Retry) Retry
	// NewLocker builds a lock design.
	NewLocker func(Env) Locker
	// NewPurchaser builds a lock-free design.
	NewPurchaser func(Env) Purchaser
	// Procs, when set, says the design runs in a pool of processes of its own (a process
	// adapter's), of Procs(conns) processes per application instance for a sale of conns
	// connections, each serving one buyer at a time: a sale that sets no Serve of its own
	// serves that many buyers at once per instance, the others waiting in line without
	// touching Redis, as requests wait for a PHP-FPM worker. Default: nil, the design runs
	// in the buyers' goroutines.
	Procs func(conns int) int
	// Seconds: the design keeps its leases in whole seconds (EX, EXPIRE, a Unix time in
	// seconds), so that a TTL below a second would be another design's lease, not a
	// shorter one: an exploration that includes it draws whole-second TTLs. Default:
	// false, leases kept to the millisecond (PX, PEXPIRE), or none at all.
	Seconds bool
	// Outside names the faults the design cannot take part in, which a sale refuses.
	// Default: none.
	Outside []string
	// Documented is what the design documents it earns with no fault and under each
	// fault: a sale's record says whether it earned one of them, and the tests assert
	// every built-in design's on a real Redis. Default: nothing documented.
	Documented faults.Verdicts
	// DropDocumented is what the design documents it earns as the scheduler lock of a
	// scheduled drop (see scenarios.Drop), with no fault and under the faults named: a
	// wave fired twice is OVERSOLD. Default: nothing documented, a drop's record then
	// judges nothing.
	DropDocumented faults.Verdicts
}

// LockNodes is how many lock servers impl needs.
func (impl Impl) LockNodes() int { return max(impl.Nodes, 1) }

// Replicated reports whether the design's lock server must have a replica (Replicas).
func (impl Impl) Replicated() bool { return impl.Replicas > 0 }

// Validate says what is wrong with impl as a design: it must build exactly one thing.
func (impl Impl) Validate() error {
	if (impl.NewLocker == nil) == (impl.NewPurchaser == nil) {
		return errors.New("a design builds exactly one of a Locker (NewLocker) and a Purchaser (NewPurchaser)")
	}
	return nil
}

var designs = registry.New("lock", func(i Impl) string { return i.Name }, Impl.Validate)

// Register adds impl to the registry, so that list, run and matrix know it by name. It
// panics on a duplicate name or an Impl that does not Validate, since both are
// programming errors found at start-up.
func Register(impl Impl) { designs.MustAdd(impl) }

// Lookup returns the design registered under name.
func Lookup(name string) (Impl, error) { return designs.Lookup(name) }

// All returns every registered design, built-in ones first, in registration order.
func All() []Impl { return designs.All() }

// Names returns the registered names in registration order.
func Names() []string { return designs.Names() }
