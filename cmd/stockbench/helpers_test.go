package main

import (
	"flag"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/docs"
	"github.com/stockbench/stockbench/bench/runfile"
)

// lastLine is the last line of what a command printed.
func lastLine(b []byte) string {
	s := strings.TrimRight(string(b), "\n")
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// TestCommandsBound: every command the usage and the docs list runs, and every command
// that runs is listed.
func TestCommandsBound(t *testing.T) {
	for _, c := range docs.Commands {
		if commands[c.Name] == nil {
			t.Errorf("docs.Commands lists %q, which no code runs", c.Name)
		}
	}
	if len(commands) != len(docs.Commands) {
		t.Errorf("%d commands run, %d listed in docs.Commands", len(commands), len(docs.Commands))
	}
}

// TestJobOfReadsTheCommandLinesSale: a sale value becomes the same job whether it is
// read directly (bench.JobOf, as replay, shrink and explore do) or through the command
// line it renders (as a person reruns it), for built-in designs, design files, adapters
// and queues.
func TestJobOfReadsTheCommandLinesSale(t *testing.T) {
	for _, args := range [][]string{
		{"--lock", "token", "--fault", "client-pause:nth=3", "--buyers", "40", "--think", "uniform:1ms-3ms", "--seed", "7"},
		{"--lock", "set-nx-ex", "--scenario", "drop-sale", "--fault", "failover"},
		{"--lock-file", "../../examples/locks/token-scripts.json", "--ttl", "2s", "--check-linearizable"},
		{"--lock-exec", "py=/usr/bin/python3 ../../adapters/python/redis_py_lock.py", "--adapter-procs", "3", "--fault", "crash-holder"},
		{"--queue", "stream", "--fault", "worker-crash:count=2", "--fulfil", "idempotent", "--workers", "3"},
	} {
		c, jobs, _, err := runJobs(args, io.Discard)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		want := c.sale(jobs[0])
		want.Redis = nil // where Redis came from (STOCKBENCH_REDIS here) is the command's, not the job's
		j, err := bench.JobOf(want)
		if err != nil {
			t.Fatalf("%q: JobOf: %v", args, err)
		}
		if got := bench.SaleOf(&c.designs, j); !reflect.DeepEqual(got.Args(), want.Args()) {
			t.Errorf("%q: JobOf's sale runs as %q, the command line's as %q", args, got.Args(), want.Args())
		}
	}
}

// TestRunFileSettingsAreTheSaleFlags: what a run file's settings may set is exactly
// what the sale flags bind, no machine flag among them.
func TestRunFileSettingsAreTheSaleFlags(t *testing.T) {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	new(saleFlags).bind(fs)
	var bound []string
	fs.VisitAll(func(f *flag.Flag) { bound = append(bound, f.Name) })
	if !slices.Equal(bound, runfile.SaleSettings) {
		t.Errorf("the sale flags are %q; a run file's settings %q", bound, runfile.SaleSettings)
	}
}
