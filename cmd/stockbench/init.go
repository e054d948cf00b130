package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/scaffold"
)

// initCommand is `stockbench init`: a new design's files (package scaffold), and what to
// run next.
func initCommand(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("init", "init (--lock-file | --adapter LANG [--from LIBRARY] | --go) [--name NAME] [--dir DIR]")
	var o scaffold.Options
	lockFile := fs.Bool("lock-file", false, "a Lua design file (locks/NAME.json) and its run files")
	adapter := fs.String("adapter", "", "an adapter process in `lang` ("+strings.ReplaceAll(strings.Trim(fmt.Sprint(scaffold.Languages), "[]"), " ", ", ")+"), packaged as that language packages it, and its run files")
	kit := fs.Bool("go", false, "a Go lock and a go test that puts it through stockbench's sales (the kit)")
	fs.StringVar(&o.Name, "name", scaffold.DefaultName, "the design's `name`, in its files and run files")
	fs.StringVar(&o.From, "from", "", "with --adapter php, the `library` the lock starts from: "+strings.Join(scaffold.Froms, " (Symfony Lock's RedisStore), ")+" (Laravel's cache lock), each as Debian packages it; default phpredis alone")
	fs.StringVar(&o.Dir, "dir", ".", "the `directory` the files go to (made when missing); an existing file is never overwritten")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	route, err := scaffold.Choose(*lockFile, *adapter, *kit)
	if o.Route = route; err == nil {
		err = scaffold.Check(o)
	}
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	written, err := scaffold.Write(o)
	if err != nil {
		return bench.Complain(stderr, err)
	}
	scaffold.Report(stdout, written, o)
	return bench.Exit(stdout, bench.ExitOK, fmt.Sprintf("%d files written in %s", len(written), o.Dir))
}
