package main

import (
	"context"
	"flag"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/designfile"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
)

// catalogue is the designs a command can name: those built into the binary, and those
// read from design files (--lock-file, --queue-file), which run like built-in ones.
type catalogue struct {
	files []designfile.Design
}

// bind adds the design-file flags; each file is read as its flag is parsed, so that a bad
// one is a usage error before anything starts.
func (c *catalogue) bind(fs *flag.FlagSet) {
	fs.Func("lock-file", "a lock design written as Lua scripts, a JSON `file` (see examples/locks); repeatable", c.adder(true))
	fs.Func("queue-file", "a queue design written as Lua scripts, a JSON `file` (see examples/queues); repeatable", c.adder(false))
}

func (c *catalogue) adder(lock bool) func(string) error {
	return func(path string) error {
		d, err := designfile.Read(path)
		if err != nil {
			return err
		}
		return c.add(d, lock)
	}
}

// add adds d, read from a --lock-file (lock) or a --queue-file, unless its name is
// taken.
func (c *catalogue) add(d designfile.Design, lock bool) error {
	switch {
	case lock && d.Lock == nil:
		return fmt.Errorf("%s: a queue design; pass it with --queue-file", d.Path)
	case !lock && d.Queue == nil:
		return fmt.Errorf("%s: a lock design; pass it with --lock-file", d.Path)
	case slices.Contains(lockimpl.Names(), d.Name()) || slices.Contains(queueimpl.Names(), d.Name()):
		return fmt.Errorf("%s: %q is a built-in design's name; choose another", d.Path, d.Name())
	}
	for _, o := range c.files {
		if o.Name() == d.Name() {
			return fmt.Errorf("%s: %q is the name of the design in %s too", d.Path, d.Name(), o.Path)
		}
	}
	c.files = append(c.files, d)
	return nil
}

// locks are the lock designs read from files.
func (c *catalogue) locks() []lockimpl.Impl {
	return fromFiles(c, func(d designfile.Design) *lockimpl.Impl { return d.Lock })
}

// queues are the queue designs read from files.
func (c *catalogue) queues() []queueimpl.Impl {
	return fromFiles(c, func(d designfile.Design) *queueimpl.Impl { return d.Queue })
}

// fromFiles is the designs of one kind read from files: those pick finds in them.
func fromFiles[T any](c *catalogue, pick func(designfile.Design) *T) []T {
	var out []T
	for _, d := range c.files {
		if impl := pick(d); impl != nil {
			out = append(out, *impl)
		}
	}
	return out
}

// lockNames are every lock design's name: built-in ones, then those from files.
func (c *catalogue) lockNames() []string {
	return append(lockimpl.Names(), implNames(c.locks(), func(i lockimpl.Impl) string { return i.Name })...)
}

// queueNames are every queue design's name likewise.
func (c *catalogue) queueNames() []string {
	return append(queueimpl.Names(), implNames(c.queues(), func(i queueimpl.Impl) string { return i.Name })...)
}

func implNames[T any](impls []T, name func(T) string) []string {
	out := make([]string, len(impls))
	for i, impl := range impls {
		out[i] = name(impl)
	}
	return out
}

// lock is the lock design named name.
func (c *catalogue) lock(name string) (lockimpl.Impl, error) {
	for _, impl := range c.locks() {
		if impl.Name == name {
			return impl, nil
		}
	}
	impl, err := lockimpl.Lookup(name)
	if err != nil {
		return impl, fmt.Errorf("unknown lock %q (known: %s)", name, joinNames(c.lockNames()))
	}
	return impl, nil
}

// queue is the queue design named name.
func (c *catalogue) queue(name string) (queueimpl.Impl, error) {
	for _, impl := range c.queues() {
		if impl.Name == name {
			return impl, nil
		}
	}
	impl, err := queueimpl.Lookup(name)
	if err != nil {
		return impl, fmt.Errorf("unknown queue %q (known: %s)", name, joinNames(c.queueNames()))
	}
	return impl, nil
}

// check has Redis compile every file design's scripts before the first sale: a script it
// rejects is one line naming the file and the script.
func (c *catalogue) check(ctx context.Context, r redis.Scripter) error {
	for _, d := range c.files {
		if err := d.Check(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
