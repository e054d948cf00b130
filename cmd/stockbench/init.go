package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/scaffold"
)

// initCommand is `stockbench init`: a new design's files (package scaffold), and what to
// run next.
func initCommand(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("init", "init (--lock-file | --adapter LANG | --go) [--name NAME] [--dir DIR]")
	var o scaffold.Options
	langs := make([]string, len(scaffold.Languages))
	for i, l := range scaffold.Languages {
		langs[i] = string(l)
	}
	lockFile := fs.Bool("lock-file", false, "a Lua design file (locks/NAME.json) and its run files")
	adapter := fs.String("adapter", "", "an adapter process in `lang` ("+strings.Join(langs, ", ")+"), packaged as that language packages it, and its run files")
	kit := fs.Bool("go", false, "a Go lock and a go test that puts it through stockbench's sales (the kit)")
	fs.StringVar(&o.Name, "name", scaffold.DefaultName, "the design's `name`, in its files and run files")
	fs.StringVar(&o.Dir, "dir", ".", "the `directory` the files go to (made when missing); an existing file is never overwritten")
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	n := 0
	for _, set := range []bool{*lockFile, *adapter != "", *kit} {
		if set {
			n++
		}
	}
	switch {
	case n != 1:
		return bench.Complain(stderr, bench.UsageError(errors.New("init: one of --lock-file, --adapter LANG or --go")))
	case *lockFile:
		o.Route = scaffold.LockFile
	case *kit:
		o.Route = scaffold.GoKit
	case !slices.Contains(scaffold.Languages, scaffold.Route(*adapter)):
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("init: --adapter %q: one of %s", *adapter, strings.Join(langs, ", "))))
	default:
		o.Route = scaffold.Route(*adapter)
	}
	if err := scaffold.Check(o); err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	written, err := scaffold.Write(o)
	if err != nil {
		return bench.Complain(stderr, err)
	}
	for _, p := range written {
		fmt.Fprintln(stdout, "wrote", p)
	}
	fmt.Fprintln(stdout, "\nnext:")
	for _, l := range scaffold.Next(o) {
		fmt.Fprintln(stdout, "  "+l)
	}
	return bench.ExitOK
}
