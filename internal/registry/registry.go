// Package registry keeps named things (designs, presets) in the order they were added,
// for lookup by name from a command line or a test.
package registry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Registry holds things of type T by their names. Its methods are safe for concurrent
// use.
type Registry[T any] struct {
	what  string
	name  func(T) string
	check func(T) error
	mu    sync.RWMutex
	all   []T
}

// New returns a registry of what (a word for errors: "lock", "queue scenario") holding
// things, which names each thing with name and refuses one that check, when set, finds
// wrong.
func New[T any](what string, name func(T) string, check func(T) error, things ...T) *Registry[T] {
	r := &Registry[T]{what: what, name: name, check: check}
	for _, t := range things {
		r.MustAdd(t)
	}
	return r
}

// Add adds t, unless it has no name, its name is taken, or check finds it wrong.
func (r *Registry[T]) Add(t T) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.name(t)
	if n == "" {
		return fmt.Errorf("a %s needs a name", r.what)
	}
	if r.check != nil {
		if err := r.check(t); err != nil {
			return fmt.Errorf("%s %q: %w", r.what, n, err)
		}
	}
	if slices.ContainsFunc(r.all, func(o T) bool { return r.name(o) == n }) {
		return fmt.Errorf("a %s named %q is registered already", r.what, n)
	}
	r.all = append(r.all, t)
	return nil
}

// MustAdd is Add for registrations made at start-up, as database/sql's Register is: a
// thing refused is a programming error, and it panics.
func (r *Registry[T]) MustAdd(t T) {
	if err := r.Add(t); err != nil {
		panic("register: " + err.Error())
	}
}

// Lookup returns the thing named name, or an error that lists the names known.
func (r *Registry[T]) Lookup(name string) (T, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.all {
		if r.name(t) == name {
			return t, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("unknown %s %q (known: %s)", r.what, name, strings.Join(r.namesLocked(), ", "))
}

// All returns every thing, in the order added.
func (r *Registry[T]) All() []T {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.all)
}

// Names returns every name, in the order added.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.namesLocked()
}

func (r *Registry[T]) namesLocked() []string {
	names := make([]string, len(r.all))
	for i, t := range r.all {
		names[i] = r.name(t)
	}
	return names
}
