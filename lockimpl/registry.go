package lockimpl

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/oracle"
)

// Env is what a design is built on.
type Env struct {
	// Locks are the lock servers: Impl.Nodes independent ones (one for most designs).
	Locks []redis.UniversalClient
	// Stock is the server that holds the stock; lock-free designs work on it alone.
	Stock redis.UniversalClient
	// Retry is the buyers' loop, for designs that retry inside a purchase (watch).
	Retry Retry
}

// Impl is a registered design: a name, what it is for, what it is expected to earn under
// each fault, and how to build it. Exactly one of NewLocker and NewPurchaser is set.
type Impl struct {
	// Name is what users pass to --lock.
	Name string
	// Summary says in one line how the design works.
	Summary string
	// Nodes is how many independent lock servers the design uses. Default: 1.
	Nodes int
	// Expect maps a fault name ("none" for a sale without faults) to the verdict classes
	// the design may earn under it; tests assert them. A fault not listed is not asserted
	// (the outcome depends on timing the harness does not control).
	Expect map[string][]oracle.Class
	// Retry, when set, adjusts the buyers' retry loop to what the design's algorithm
	// prescribes (Redlock's random retry delay). Default: the sale's loop as it is.
	Retry func(Retry) Retry
	// NewLocker builds a lock design.
	NewLocker func(Env) Locker
	// NewPurchaser builds a lock-free design.
	NewPurchaser func(Env) Purchaser
}

// LockNodes is how many lock servers impl needs.
func (impl Impl) LockNodes() int { return max(impl.Nodes, 1) }

var (
	registryMu sync.RWMutex
	registry   []Impl
)

// Register adds impl to the registry. Like database/sql's Register it panics on a
// duplicate name or an Impl that does not build exactly one thing, since both are
// programming errors found at start-up.
func Register(impl Impl) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if impl.Name == "" || (impl.NewLocker == nil) == (impl.NewPurchaser == nil) {
		panic(fmt.Sprintf("lockimpl: Register %q: needs a name and exactly one of NewLocker, NewPurchaser", impl.Name))
	}
	if slices.ContainsFunc(registry, func(i Impl) bool { return i.Name == impl.Name }) {
		panic(fmt.Sprintf("lockimpl: Register called twice for %q", impl.Name))
	}
	registry = append(registry, impl)
}

// Lookup returns the design registered under name.
func Lookup(name string) (Impl, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	for _, impl := range registry {
		if impl.Name == name {
			return impl, nil
		}
	}
	return Impl{}, fmt.Errorf("unknown lock %q (known: %s)", name, strings.Join(namesLocked(), ", "))
}

// All returns every registered design, built-in ones first, in registration order.
func All() []Impl {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Clone(registry)
}

// Names returns the registered names in registration order.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return namesLocked()
}

func namesLocked() []string {
	names := make([]string, len(registry))
	for i, impl := range registry {
		names[i] = impl.Name
	}
	return names
}
