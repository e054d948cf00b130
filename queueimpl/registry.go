package queueimpl

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/oracle"
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
}

// Impl is a registered queue design.
type Impl struct {
	// Name is what users pass to --queue.
	Name string
	// Summary says in one line how the design works.
	Summary string
	// Guarantee is "at most once", "at least once" or what else the design promises.
	Guarantee string
	// Ordered is set when the design promises to hand tasks out in Seq order.
	Ordered bool
	// Expect maps a fault plan to the verdict classes the design may earn with a naive
	// fulfil ([0]) and with an idempotent one ([1]); tests assert them.
	Expect map[string][2][]oracle.Class
	// New builds the design; Setup, if the queue has one, is run before the sale.
	New func(Env) Queue
}

// Setupper is a design that needs its keys prepared before the first order.
type Setupper interface {
	Setup(ctx context.Context) error
}

var (
	registryMu sync.RWMutex
	registry   []Impl
)

// Register adds impl; it panics on a duplicate name or a missing constructor.
func Register(impl Impl) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if impl.Name == "" || impl.New == nil {
		panic(fmt.Sprintf("queueimpl: Register %q: needs a name and New", impl.Name))
	}
	if slices.ContainsFunc(registry, func(i Impl) bool { return i.Name == impl.Name }) {
		panic(fmt.Sprintf("queueimpl: Register called twice for %q", impl.Name))
	}
	registry = append(registry, impl)
}

// Lookup returns the design registered under name.
func Lookup(name string) (Impl, error) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, len(registry))
	for i, impl := range registry {
		if impl.Name == name {
			return impl, nil
		}
		names[i] = impl.Name
	}
	return Impl{}, fmt.Errorf("unknown queue %q (known: %s)", name, strings.Join(names, ", "))
}

// All returns every registered design in registration order.
func All() []Impl {
	registryMu.RLock()
	defer registryMu.RUnlock()
	return slices.Clone(registry)
}

// Names returns the registered names.
func Names() []string {
	var names []string
	for _, impl := range All() {
		names = append(names, impl.Name)
	}
	return names
}
