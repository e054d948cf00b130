package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/scenarios"
)

// bindDesigns binds the flags that add designs to cat: each file is read, and each Go
// module built, as its flag is parsed, so that a bad one is a usage error before
// anything starts.
func bindDesigns(fs *flag.FlagSet, cat *catalog.Catalog) {
	fs.Func("lock-file", "a lock design written as Lua scripts, a JSON `file` (see examples/locks); repeatable", func(p string) error { return cat.AddFile(p, true) })
	fs.Func("queue-file", "a queue design written as Lua scripts, a JSON `file` (see examples/queues); repeatable", func(p string) error { return cat.AddFile(p, false) })
	fs.Func("lock-exec", "a lock in any language: a process adapter, `[NAME=]CMD ARGS` (see adapters/PROTOCOL.md); repeatable", adds(cat, adapter.SupportsLock))
	fs.Func("lock-go", "a Go lock library: `[NAME=]MODULE@VERSION [ARGS]` (a release, a commit or a branch) or `[NAME=]MODULE=DIR [ARGS]` (a working tree) builds the adapter of adapters/go that imports MODULE against it (once, into the user's cache directory) and runs it as --lock-exec does; redsync, bsm/redislock and rueidis's rueidislock, as github.com/go-redsync/redsync/v4@v4.12.1 --extend; repeatable, for two versions side by side",
		func(spec string) error { return cat.AddGo(context.Background(), adapter.SupportsLock, spec) })
	fs.Func("queue-go", "a Go queue library, `[NAME=]MODULE@VERSION [ARGS]` or `[NAME=]MODULE=DIR [ARGS]`, as --lock-go: hibiken/asynq, as github.com/hibiken/asynq@v0.26.0",
		func(spec string) error { return cat.AddGo(context.Background(), adapter.SupportsQueue, spec) })
	fs.Func("buy-exec", "a whole purchase in any language: a process adapter that supports buy, `[NAME=]CMD ARGS`; repeatable", adds(cat, adapter.SupportsBuy))
	fs.Func("queue-exec", "a queue in any language: a process adapter that supports queue, `[NAME=]CMD ARGS`; repeatable", adds(cat, adapter.SupportsQueue))
	fs.Func("adapter-procs", "`n` processes in each adapter's pool (default: the sale's --conns, as a PHP-FPM pool)", func(v string) error {
		n, err := scenarios.Positive(strconv.Atoi)(v)
		cat.Procs = n
		return err
	})
	fs.Func("adapter-nodes", "`n` independent lock servers for each lock adapter, which must support nodes (Redlock's majority over five; default 1)", func(v string) error {
		n, err := scenarios.Positive(strconv.Atoi)(v)
		if err == nil && n > catalog.MaxNodes {
			err = fmt.Errorf("at most %d", catalog.MaxNodes)
		}
		cat.Nodes = n
		return err
	})
}

// adds adds a process adapter of part as its flag is parsed.
func adds(cat *catalog.Catalog, part string) func(string) error {
	return func(spec string) error { return cat.AddExec(part, spec) }
}
