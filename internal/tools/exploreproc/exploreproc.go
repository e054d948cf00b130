// Package exploreproc runs an exploration as a stockbench child process and reads the
// explore.json it wrote, with the machine's idle CPU meanwhile: what make bench-explore
// and make power time and count.
package exploreproc

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
)

// Run is one exploration's outcome.
type Run struct {
	Report explore.Report
	// Idle is the machine's idle CPU share while it ran; -1 unread.
	Idle float64
	Took time.Duration
}

// Measured is how many of the exploration's regions were shrunk and measured.
func (r Run) Measured() int {
	n := 0
	for _, f := range r.Report.Findings {
		if f.Smallest.Design != "" {
			n++
		}
	}
	return n
}

// ToldApart reports whether a comparison between its designs was significant.
func (r Run) ToldApart() bool {
	for _, f := range r.Report.Findings {
		for _, c := range f.Comparisons {
			if c.Significant {
				return true
			}
		}
	}
	return false
}

// Struck is how many of the space's faults struck in at least explore.MinStrikes of the
// search's sales.
func (r Run) Struck() int {
	n := 0
	for _, k := range r.Report.Faults {
		if r.Report.Struck[k] >= explore.MinStrikes {
			n++
		}
	}
	return n
}

// Explore runs bin's `explore ARGS --out OUT` and reads the explore.json it wrote. An
// exploration that found a design worse exits 1: a finding, not a failure; one that
// refused its arguments is a bench.UsageError naming who.
func Explore(ctx context.Context, who, bin string, args []string, out string) (Run, error) {
	idle := explore.MachineIdle()
	idle()
	began := time.Now()
	cmd := exec.CommandContext(ctx, bin, append(append([]string{"explore"}, args...), "--out", out)...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	err := cmd.Run()
	if ctx.Err() != nil {
		return Run{}, ctx.Err()
	}
	if code := cmd.ProcessState.ExitCode(); err != nil && code != bench.ExitFailed {
		if code == bench.ExitUsage {
			return Run{}, bench.UsageError(fmt.Errorf("%s refused the exploration: %s", who, lastLine(log.String())))
		}
		return Run{}, fmt.Errorf("%s's exploration: %w: %s", who, err, lastLine(log.String()))
	}
	r := Run{Idle: -1, Took: time.Since(began)}
	if share, ok := idle(); ok {
		r.Idle = share
	}
	found, _ := filepath.Glob(filepath.Join(out, "*", "explore.json"))
	if len(found) != 1 {
		return r, fmt.Errorf("%s's exploration wrote no explore.json in %s", who, out)
	}
	js, err := os.ReadFile(found[0])
	if err == nil {
		err = json.Unmarshal(js, &r.Report)
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w", found[0], err)
	}
	return r, nil
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}
