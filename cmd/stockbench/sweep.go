package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/catalog"
	"github.com/stockbench/stockbench/bench/sweep"
	"github.com/stockbench/stockbench/faults"
)

// sweepCommand is `stockbench sweep`: one sale per value of one setting and per design,
// so that the report plots damage, sales/s and p99 against the setting: where a design
// stops overselling, where it starts to crawl.
func sweepCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sweep", "sweep --lock A[,B] --vary SETTING=FROM..TO:N [--scenario NAME] [--fault PLAN] [flags]")
	var c common
	sf := c.bindSales(fs)
	locks := fs.String("lock", "", "comma-separated lock designs (stockbench list names them)")
	scenario := fs.String("scenario", "flash-sale", "preset whose settings the other flags override")
	fault := fs.String("fault", faults.None, "the fault plan of every sale")
	vary := fs.String("vary", "", "the setting and its values: SETTING=FROM..TO:N (N points, spaced evenly on a log scale when FROM is above 0) or SETTING=A,B,C; settings: "+strings.Join(sweep.Settings(), ", "))
	if help, err := parse(fs, args, stdout); help || err != nil {
		return bench.Complain(stderr, err)
	}
	if *locks == "" || *vary == "" {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("sweep: --lock and --vary are required (see 'stockbench sweep -h')")))
	}
	v, err := sweep.Parse(*vary)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("sweep: --vary: %w", err)))
	}
	if given(fs, v.Setting()) {
		return bench.Complain(stderr, bench.UsageError(fmt.Errorf("sweep: --%s is what --vary varies; give it once", v.Setting())))
	}
	base, notes, err := bench.Plan{Locks: catalog.Split(*locks), Scenarios: []string{*scenario}, Faults: []string{*fault}}.LockJobs(&c.designs, sf.overrides(c.external()))
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	c.notes = append(c.notes, notes...)
	jobs, err := v.Jobs(base, *scenario)
	if err != nil {
		return bench.Complain(stderr, bench.UsageError(err))
	}
	return bench.Execute(ctx, c.options(args, nil), jobs, stdout, stderr).Tell(stdout)
}
