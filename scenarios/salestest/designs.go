package salestest

import (
	"context"
	"testing"

	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
)

// The designs a test did not write in Go reach the kit as they reach the command
// (package catalog): a design file (examples/locks, examples/queues), a process adapter
// in any language (adapters/PROTOCOL.md), or a Go lock library built at a module
// version. Each returns the design's Impl, which Lock, Queue and ExploreLock run as any
// other; a file or adapter that cannot be had fails the test at once.

// LockFile is the lock design in the design file at path, as --lock-file reads it.
func LockFile(t testing.TB, path string) lockimpl.Impl {
	t.Helper()
	var c catalog.Catalog
	return only(t, c.AddFile(path, true), c.Locks)
}

// QueueFile is the queue design in the design file at path, as --queue-file reads it.
func QueueFile(t testing.TB, path string) queueimpl.Impl {
	t.Helper()
	var c catalog.Catalog
	return only(t, c.AddFile(path, false), c.Queues)
}

// LockExec is the lock of a process adapter, spec "[NAME=]CMD ARGS" as --lock-exec takes
// it; its pool has procs processes (0: one per connection of the sale).
func LockExec(t testing.TB, spec string, procs int) lockimpl.Impl {
	t.Helper()
	c := catalog.Catalog{Procs: procs}
	return only(t, c.AddExec(adapter.SupportsLock, spec), c.Locks)
}

// QueueExec is the queue of a process adapter, spec as --queue-exec takes it.
func QueueExec(t testing.TB, spec string, procs int) queueimpl.Impl {
	t.Helper()
	c := catalog.Catalog{Procs: procs}
	return only(t, c.AddExec(adapter.SupportsQueue, spec), c.Queues)
}

// LockGo is the adapter of adapters/go that imports a Go lock library, built at the
// module's version, spec "[NAME=]MODULE@VERSION [ARGS]" as --lock-go takes it (the test
// must run in stockbench's checkout).
func LockGo(t testing.TB, spec string) lockimpl.Impl {
	t.Helper()
	var c catalog.Catalog
	return only(t, c.AddGo(context.Background(), adapter.SupportsLock, spec), c.Locks)
}

// only is the one design of the catalogue, once added without error.
func only[T any](t testing.TB, err error, all func() []T) T {
	t.Helper()
	if err != nil {
		t.Fatalf("salestest: %v", err)
	}
	return all()[0]
}
