package report

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stockbench/stockbench/results"
)

// ErrRead marks an error reading a run to report on: the caller's input, not the report.
type ErrRead struct{ Err error }

func (e ErrRead) Error() string { return e.Err.Error() }
func (e ErrRead) Unwrap() error { return e.Err }

// Rebuild writes the report of the saved runs dirs (run directories or results files)
// into out: for one run, by default its own directory; for several, one report that
// puts them side by side, by default in a new compare-* directory beside the first.
// plots, when set, overrides which plot files each run's report writes. It returns the
// directory written; an error reading a run is an ErrRead.
func Rebuild(ctx context.Context, dirs []string, out, plots string) (string, error) {
	var sources []Source
	for i, d := range dirs {
		f, err := results.ReadRun(d)
		if err != nil {
			return "", ErrRead{err}
		}
		name := filepath.Base(filepath.Clean(strings.TrimSuffix(d, "results.json")))
		if slices.ContainsFunc(sources, func(s Source) bool { return s.Name == name }) {
			name = fmt.Sprintf("%s#%d", name, i+1)
		}
		if plots != "" {
			f.Plots = plots
		}
		sources = append(sources, Source{Name: name, File: f})
	}
	dir := out
	switch {
	case dir == "" && len(dirs) == 1:
		dir = resultsDir(dirs[0])
	case dir == "":
		dir = filepath.Join(filepath.Dir(resultsDir(dirs[0])), "compare-"+time.Now().UTC().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return dir, Report(ctx, dir, sources)
}

// resultsDir is the run directory d names: d itself, or the directory of a results.json.
func resultsDir(d string) string {
	if filepath.Base(d) == "results.json" {
		return filepath.Dir(d)
	}
	return d
}
