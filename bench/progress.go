package bench

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/stockbench/stockbench/results/live"
	"github.com/stockbench/stockbench/scenarios"
)

// progressAfter is how long a sale runs before its progress line appears: short sales
// finish before anyone would read it.
const progressAfter = 2 * time.Second

// watching is the Progress hook of a sale: its progress line on w when w is a terminal,
// and board's sale i when there is a board; nil when neither. done clears the line, so
// that the job's result line starts a new one.
func watching(w io.Writer, board *live.Board, i int) (hook func(scenarios.Progress), done func()) {
	line := progressLine(w)
	done = func() {}
	if line != nil {
		done = func() { fmt.Fprint(w, "\r\033[K") }
	}
	switch {
	case board == nil:
		return line, done
	case line == nil:
		return board.Watch(i), done
	}
	watch := board.Watch(i)
	return func(p scenarios.Progress) { line(p); watch(p) }, done
}

// progressLine returns a Progress hook that rewrites one line on w, or nil when w is not
// a terminal: a CI log or a pipe gets the start and end lines only.
func progressLine(w io.Writer) func(scenarios.Progress) {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return func(p scenarios.Progress) {
		if p.Elapsed < progressAfter {
			return
		}
		fmt.Fprintf(w, "\r\033[Kstockbench: sold %d/%d, buyers done %d/%d, %.0f sales/s, %s",
			p.Sold, p.Stock, p.Done, p.Buyers, p.SalesPerSec, p.Elapsed.Round(time.Second))
	}
}
