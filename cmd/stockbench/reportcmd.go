package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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
	var sources []report.Source
	for i, d := range dirs {
		f, err := readResults(d)
		if err != nil {
			return bench.Complain(stderr, bench.UsageError(err))
		}
		name := filepath.Base(filepath.Clean(strings.TrimSuffix(d, "results.json")))
		if slices.ContainsFunc(sources, func(s report.Source) bool { return s.Name == name }) {
			name = fmt.Sprintf("%s#%d", name, i+1)
		}
		if *plots != "" {
			f.Plots = string(*plots)
		}
		sources = append(sources, report.Source{Name: name, File: f})
	}
	dir := *out
	switch {
	case dir == "" && len(dirs) == 1:
		dir = resultsDir(dirs[0])
	case dir == "":
		dir = filepath.Join(filepath.Dir(resultsDir(dirs[0])), "compare-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return bench.Complain(stderr, fmt.Errorf("report: %w", err))
	}
	if err := report.Report(ctx, dir, sources); err != nil {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "stockbench: report: interrupted; report.html was not written")
			return bench.ExitInterrupted
		}
		return bench.Complain(stderr, fmt.Errorf("report: %w", err))
	}
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, "report.html"))
	return bench.ExitOK
}

// resultsDir is the run directory d names: d itself, or the directory of a results.json.
func resultsDir(d string) string {
	if filepath.Base(d) == "results.json" {
		return filepath.Dir(d)
	}
	return d
}

func readResults(d string) (*results.File, error) { return results.ReadRun(d) }
