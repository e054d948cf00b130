package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/report"
)

// reportCommand is `stockbench report DIR [DIR...]`: rebuild the report of saved results,
// or, given several, one report that puts them side by side.
func reportCommand(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := newFlagSet("report", "report [--out DIR] RUN_DIR [RUN_DIR...]")
	out := fset.String("out", "", "where the report goes (default: the run directory itself for one, a new compare-* directory beside the first for several)")
	plots := plotsFlag(fset, "the run's own (png for a run before --plots)")
	dirs, help, err := parseWithArgs(fset, args, stdout)
	if help || err != nil {
		return bench.Complain(stderr, err)
	}
	if len(dirs) == 0 {
		return bench.Complain(stderr, bench.UsageError(errors.New("report: name at least one run directory (results/runs/ID)")))
	}
	dir, err := report.Rebuild(ctx, dirs, *out, string(*plots))
	switch {
	case errors.As(err, new(report.ErrRead)):
		return bench.Complain(stderr, bench.UsageError(err))
	case err != nil && ctx.Err() != nil:
		return bench.Abort(stderr, bench.ExitInterrupted, "report: interrupted; report.html was not written")
	case err != nil:
		return bench.Complain(stderr, fmt.Errorf("report: %w", err))
	}
	return bench.Exit(stdout, bench.ExitOK, "report: "+filepath.Join(dir, "report.html"))
}

func readResults(d string) (*results.File, error) { return results.ReadRun(d) }
