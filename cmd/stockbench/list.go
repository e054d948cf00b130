package main

import (
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/docs"
)

// listCommand is `stockbench list`: the designs (with those of the design files given),
// the faults and the scenario presets.
func listCommand(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("list", "list [--lock-file F] [--queue-file F] [--lock-exec CMD] [--buy-exec CMD]")
	var designs catalog.Catalog
	bindDesigns(fs, &designs)
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	if err := docs.List(stdout, &designs, columns); err != nil {
		return bench.Complain(stderr, err)
	}
	return bench.Exit(stdout, bench.ExitOK, "the designs, faults and presets listed")
}
