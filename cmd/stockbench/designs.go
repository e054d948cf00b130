package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/designs/designfile"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// catalogue is the designs a command can name: those built into the binary, those read
// from design files (--lock-file, --queue-file), and process adapters (--lock-exec,
// --buy-exec), which run like built-in ones.
type catalogue struct {
	files []designfile.Design
	execs []execDesign
	procs int // --adapter-procs
	nodes int // --adapter-nodes
}

// execDesign is a process adapter: a lock (try, release), a whole purchase (buy) or a
// queue (enqueue, dequeue).
type execDesign struct {
	cfg  adapter.Config
	part string // adapter.SupportsLock, SupportsBuy or SupportsQueue
}

func (e execDesign) impl() lockimpl.Impl { return adapter.Lock(e.cfg, e.part == adapter.SupportsBuy) }

// flags names the flag of each part, for errors.
var execFlags = map[string]string{adapter.SupportsLock: "--lock-exec", adapter.SupportsBuy: "--buy-exec", adapter.SupportsQueue: "--queue-exec"}

// bind adds the design-file flags; each file is read as its flag is parsed, so that a bad
// one is a usage error before anything starts.
func (c *catalogue) bind(fs *flag.FlagSet) {
	fs.Func("lock-file", "a lock design written as Lua scripts, a JSON `file` (see examples/locks); repeatable", c.adder(true))
	fs.Func("queue-file", "a queue design written as Lua scripts, a JSON `file` (see examples/queues); repeatable", c.adder(false))
	fs.Func("lock-exec", "a lock in any language: a process adapter, `[NAME=]CMD ARGS` (see adapters/PROTOCOL.md); repeatable", c.execAdder(adapter.SupportsLock))
	fs.Func("lock-go", "a Go lock library at a module version: `[NAME=]MODULE@VERSION [ARGS]` builds the adapter of adapters/go that imports MODULE against that version (once, into bin/adapters) and runs it as --lock-exec does, as github.com/go-redsync/redsync/v4@v4.12.1 --extend; repeatable, for two versions side by side", c.goLockAdder)
	fs.Func("buy-exec", "a whole purchase in any language: a process adapter that supports buy, `[NAME=]CMD ARGS`; repeatable", c.execAdder(adapter.SupportsBuy))
	fs.Func("queue-exec", "a queue in any language: a process adapter that supports queue, `[NAME=]CMD ARGS`; repeatable", c.execAdder(adapter.SupportsQueue))
	fs.Func("adapter-procs", "`n` processes in each adapter's pool (default: the sale's --conns, as a PHP-FPM pool)", func(v string) error {
		n, err := scenarios.Positive(strconv.Atoi)(v)
		c.procs = n
		return err
	})
	fs.Func("adapter-nodes", "`n` independent lock servers for each lock adapter, which must support nodes (Redlock's majority over five; default 1)", func(v string) error {
		n, err := scenarios.Positive(strconv.Atoi)(v)
		if err == nil && n > maxNodes {
			err = fmt.Errorf("at most %d", maxNodes)
		}
		c.nodes = n
		return err
	})
}

// maxNodes is the most lock servers --adapter-nodes gives: Redlock's five, or seven, or
// nine.
const maxNodes = 9

// execAdder adds an adapter as its flag is parsed: "[NAME=]CMD ARGS", NAME by default
// the base name of the script (the first argument) or of the command, without extension.
func (c *catalogue) execAdder(part string) func(string) error {
	return func(spec string) error {
		name, command := named(spec, " /")
		argv := strings.Fields(command)
		if len(argv) == 0 {
			return errors.New("an adapter needs a command")
		}
		if name == "" {
			name = argv[min(1, len(argv)-1)]
			name = strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
		}
		if err := c.free(name, command); err != nil {
			return err
		}
		c.execs = append(c.execs, execDesign{adapter.Config{Name: name, Command: command}, part})
		return nil
	}
}

// named splits a design's spec "[NAME=]REST": NAME when what comes before the first "="
// holds no space nor any of not, else "" and the spec whole.
func named(spec, not string) (name, rest string) {
	name, rest, ok := strings.Cut(spec, "=")
	if !ok || strings.ContainsAny(name, " "+not) {
		return "", spec
	}
	return name, rest
}

// free says whether name is free for a design from where.
func (c *catalogue) free(name, where string) error {
	if slices.Contains(lockimpl.Names(), name) || slices.Contains(queueimpl.Names(), name) {
		return fmt.Errorf("%s: %q is a built-in design's name; choose another", where, name)
	}
	for _, o := range c.files {
		if o.Name() == name {
			return fmt.Errorf("%s: %q is the name of the design in %s too", where, name, o.Path)
		}
	}
	for _, e := range c.execs {
		if e.cfg.Name == name {
			return fmt.Errorf("%s: %q is the name of the adapter %q too; name it NAME=CMD", where, name, e.cfg.Command)
		}
	}
	return nil
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
	}
	if err := c.free(d.Name(), d.Path); err != nil {
		return err
	}
	c.files = append(c.files, d)
	return nil
}

// locks are the lock designs read from files, then the adapters.
func (c *catalogue) locks() []lockimpl.Impl {
	out := fromFiles(c, func(d designfile.Design) *lockimpl.Impl { return d.Lock })
	for _, e := range c.execs {
		if e.part != adapter.SupportsQueue {
			e.cfg.Procs = c.procs
			if e.part == adapter.SupportsLock {
				e.cfg.Nodes = c.nodes
			}
			out = append(out, e.impl())
		}
	}
	return out
}

// queues are the queue designs read from files, then the adapters.
func (c *catalogue) queues() []queueimpl.Impl {
	out := fromFiles(c, func(d designfile.Design) *queueimpl.Impl { return d.Queue })
	for _, e := range c.execs {
		if e.part == adapter.SupportsQueue {
			e.cfg.Procs = c.procs
			out = append(out, adapter.Queue(e.cfg))
		}
	}
	return out
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

// check has Redis compile every file design's scripts, and starts one process of each
// adapter, before the first sale: a script Redis rejects is one line naming the file and
// the script, an adapter that cannot start or says hello wrong one line naming it.
func (c *catalogue) check(ctx context.Context, r redis.UniversalClient) error {
	for _, d := range c.files {
		if err := d.Check(ctx, r); err != nil {
			return err
		}
	}
	for _, e := range c.execs {
		probe := adapter.Probe
		if e.part == adapter.SupportsQueue {
			probe = adapter.ProbeQueue
		}
		supports, err := probe(ctx, e.cfg, r)
		if err != nil {
			return err
		}
		if c.nodes > 1 && e.part == adapter.SupportsLock && !slices.Contains(supports, adapter.SupportsNodes) {
			return fmt.Errorf("adapter %s does not support nodes: --adapter-nodes %d gives a lock several servers only when its adapter takes them", e.cfg.Name, c.nodes)
		}
		if !slices.Contains(supports, e.part) {
			hint := "it supports none of lock, buy and queue"
			for _, part := range []string{adapter.SupportsLock, adapter.SupportsBuy, adapter.SupportsQueue} {
				if slices.Contains(supports, part) {
					hint = "pass it with " + execFlags[part]
				}
			}
			return fmt.Errorf("adapter %s supports %q, not %s; %s", e.cfg.Name, supports, e.part, hint)
		}
	}
	return nil
}
