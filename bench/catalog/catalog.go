// Package catalog names the designs a sale can run: the built-in ones, design files,
// process adapters in any language, and Go lock libraries built at a module version.
// It imports nothing of the harness, so that the test kit reaches it too; bench.Plan
// turns its names into jobs.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/designs/designfile"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
)

// Catalog is the designs a command or a test can name: those built into the binary,
// those read from design files (--lock-file, --queue-file), and process adapters
// (--lock-exec, --buy-exec, --queue-exec, --lock-go), which run like built-in ones. The
// zero Catalog names the built-in designs.
type Catalog struct {
	files []designfile.Design
	execs []execDesign
	// Procs is how many processes each adapter's pool has (--adapter-procs). Default:
	// the sale's connections, as a PHP-FPM pool.
	Procs int
	// Nodes is how many independent lock servers each lock adapter gets, which must
	// support nodes (--adapter-nodes). Default: 1.
	Nodes int
	// NodesLater, when above 1, is how many lock servers some sales of the run will give
	// each lock adapter, though Nodes does not (an analysis's Redlock deployments):
	// Check refuses an adapter that does not support nodes before any of them starts.
	NodesLater int
	// SentinelLater: some sales of the run measure each adapter's own client over a
	// Sentinel group (an analysis's Sentinel deployment), so Check refuses an adapter
	// whose client does not follow one itself before any of them starts.
	SentinelLater bool
}

// execDesign is a process adapter: a lock (try, release), a whole purchase (buy) or a
// queue (enqueue, dequeue).
type execDesign struct {
	cfg  adapter.Config
	part string // adapter.SupportsLock, SupportsBuy or SupportsQueue
	// goSpec is the library a --lock-go adapter was built against, as given
	// (MODULE@VERSION ARGS), which reruns name rather than the build's path.
	goSpec string
}

func (e execDesign) impl() lockimpl.Impl { return adapter.Lock(e.cfg, e.part == adapter.SupportsBuy) }

// ExecFlags names the flag of each adapter part, for errors.
var ExecFlags = map[string]string{adapter.SupportsLock: "--lock-exec", adapter.SupportsBuy: "--buy-exec", adapter.SupportsQueue: "--queue-exec"}

// MaxNodes is the most lock servers an adapter gets: Redlock's five, or seven, or nine.
const MaxNodes = 9

// AddExec adds a process adapter that supports part (adapter.SupportsLock, SupportsBuy
// or SupportsQueue): spec is "[NAME=]CMD ARGS", NAME by default the base name of the
// script (the first argument) or of the command, without extension.
func (c *Catalog) AddExec(part, spec string) error {
	name, command := Named(spec, " /")
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
	c.execs = append(c.execs, execDesign{cfg: adapter.Config{Name: name, Command: command}, part: part})
	return nil
}

// Named splits a design's spec "[NAME=]REST": NAME when what comes before the first "="
// holds no space nor any of not, else "" and the spec whole.
func Named(spec, not string) (name, rest string) {
	name, rest, ok := strings.Cut(spec, "=")
	if !ok || strings.ContainsAny(name, " "+not) {
		return "", spec
	}
	return name, rest
}

// free says whether name is free for a design from where.
func (c *Catalog) free(name, where string) error {
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

// AddFile reads the design file at path (examples/locks, examples/queues) and adds its
// design: a lock's when lock is set (--lock-file), else a queue's (--queue-file).
func (c *Catalog) AddFile(path string, lock bool) error {
	d, err := designfile.Read(path)
	if err != nil {
		return err
	}
	return c.add(d, lock)
}

// add adds d, read from a --lock-file (lock) or a --queue-file, unless its name is
// taken.
func (c *Catalog) add(d designfile.Design, lock bool) error {
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

// Locks are the lock designs read from files, then the adapters.
func (c *Catalog) Locks() []lockimpl.Impl {
	out := fromFiles(c, func(d designfile.Design) *lockimpl.Impl { return d.Lock })
	for _, e := range c.execs {
		if e.part != adapter.SupportsQueue {
			e.cfg.Procs = c.Procs
			if e.part == adapter.SupportsLock {
				e.cfg.Nodes = c.Nodes
			}
			out = append(out, e.impl())
		}
	}
	return out
}

// Queues are the queue designs read from files, then the adapters.
func (c *Catalog) Queues() []queueimpl.Impl {
	out := fromFiles(c, func(d designfile.Design) *queueimpl.Impl { return d.Queue })
	for _, e := range c.execs {
		if e.part == adapter.SupportsQueue {
			e.cfg.Procs = c.Procs
			out = append(out, adapter.Queue(e.cfg))
		}
	}
	return out
}

// fromFiles is the designs of one kind read from files: those pick finds in them.
func fromFiles[T any](c *Catalog, pick func(designfile.Design) *T) []T {
	var out []T
	for _, d := range c.files {
		if impl := pick(d); impl != nil {
			out = append(out, *impl)
		}
	}
	return out
}

// LockNames are every lock design's name: built-in ones, then those from files.
func (c *Catalog) LockNames() []string {
	return append(lockimpl.Names(), implNames(c.Locks(), func(i lockimpl.Impl) string { return i.Name })...)
}

// QueueNames are every queue design's name likewise.
func (c *Catalog) QueueNames() []string {
	return append(queueimpl.Names(), implNames(c.Queues(), func(i queueimpl.Impl) string { return i.Name })...)
}

func implNames[T any](impls []T, name func(T) string) []string {
	out := make([]string, len(impls))
	for i, impl := range impls {
		out[i] = name(impl)
	}
	return out
}

// Lock is the lock design named name.
func (c *Catalog) Lock(name string) (lockimpl.Impl, error) {
	for _, impl := range c.Locks() {
		if impl.Name == name {
			return impl, nil
		}
	}
	impl, err := lockimpl.Lookup(name)
	if err != nil {
		return impl, fmt.Errorf("unknown lock %q (known: %s)", name, strings.Join(c.LockNames(), ","))
	}
	return impl, nil
}

// Queue is the queue design named name.
func (c *Catalog) Queue(name string) (queueimpl.Impl, error) {
	for _, impl := range c.Queues() {
		if impl.Name == name {
			return impl, nil
		}
	}
	impl, err := queueimpl.Lookup(name)
	if err != nil {
		return impl, fmt.Errorf("unknown queue %q (known: %s)", name, strings.Join(c.QueueNames(), ","))
	}
	return impl, nil
}

// Check has Redis compile every file design's scripts, and starts one process of each
// adapter, before the first sale: a script Redis rejects is one line naming the file and
// the script, an adapter that cannot start or says hello wrong one line naming it.
func (c *Catalog) Check(ctx context.Context, r redis.UniversalClient) error {
	for _, d := range c.files {
		if err := d.Check(ctx, r); err != nil {
			return err
		}
	}
	for i, e := range c.execs {
		probe := adapter.Probe
		if e.part == adapter.SupportsQueue {
			probe = adapter.ProbeQueue
		}
		supports, err := probe(ctx, e.cfg, r)
		if err != nil {
			return err
		}
		if n := max(c.Nodes, c.NodesLater); n > 1 && e.part == adapter.SupportsLock && !slices.Contains(supports, adapter.SupportsNodes) {
			return fmt.Errorf("adapter %s does not support nodes: --adapter-nodes %d gives a lock several servers only when its adapter takes them", e.cfg.Name, n)
		}
		if c.SentinelLater && !slices.Contains(supports, adapter.SupportsSentinel) {
			return fmt.Errorf("adapter %s does not support sentinel: its client does not follow a Sentinel group itself, so a sale over one would measure the harness's failover client, not the library's", e.cfg.Name)
		}
		if !slices.Contains(supports, e.part) {
			hint := "it supports none of lock, buy and queue"
			for _, part := range []string{adapter.SupportsLock, adapter.SupportsBuy, adapter.SupportsQueue} {
				if slices.Contains(supports, part) {
					hint = "pass it with " + ExecFlags[part]
				}
			}
			return fmt.Errorf("adapter %s supports %q, not %s; %s", e.cfg.Name, supports, e.part, hint)
		}
		c.execs[i].cfg.Ms = slices.Contains(supports, adapter.SupportsMs)
	}
	return nil
}

// Ms reports whether every lock design named keeps its leases to the millisecond (none
// is lockimpl.Impl.Seconds): an adapter's hello says so once Check has probed it.
func (c *Catalog) Ms(names []string) bool {
	for _, n := range names {
		if impl, err := c.Lock(n); err != nil || impl.Seconds {
			return false
		}
	}
	return len(names) > 0
}

// Source is where the design named name comes from: nil for a built-in design.
func (c *Catalog) Source(name string) *results.DesignSource {
	for _, d := range c.files {
		if d.Name() == name {
			return &results.DesignSource{File: d.Path}
		}
	}
	for _, e := range c.execs {
		if e.cfg.Name == name {
			src := &results.DesignSource{Exec: e.cfg.Command, Go: e.goSpec, Part: e.part, Procs: c.Procs}
			if c.Nodes > 1 && e.part == adapter.SupportsLock {
				src.Nodes = c.Nodes
			}
			return src
		}
	}
	return nil
}
