// Command stockbench puts Redis locks under a flash sale and reports whether they oversell
// and what they cost. Its work is package bench, the harness.
//
//	stockbench list                          implementations and scenarios
//	stockbench run --lock NAME [flags]       one scenario with one lock
//	stockbench matrix [flags]                every lock x the default scenarios
//	stockbench check [FILE]                  a run file's designs, judged by its thresholds
//	stockbench report DIR [DIR...]           rebuild a report, or compare runs side by side
//	stockbench replay DIR [--times N]        rerun a run's sales: does each earn its class again?
//	stockbench shrink DIR                    the smallest sale with a failing sale's class
//	stockbench merge SHARD_DIR...            join a sharded sale's partial records
//	stockbench gate --baseline FILE          compare a run with a baseline, for CI
//
// Exit codes: 0 done; 1 a run failed (Redis died, say), a gate found a regression or a
// check a broken threshold; 2 bad input or no Redis; 130 interrupted. Interrupted and
// failed runs still write what they measured.
package main

import (
	"os"

	"github.com/stockbench/stockbench/bench"
	// Library designs with heavy dependencies register themselves here, not in the
	// packages every sale imports.
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
)

func main() { os.Exit(bench.Main()) }
