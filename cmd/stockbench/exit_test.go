package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// TestExitStatus holds each command that runs sales to bench.ExitRule on a real Redis:
// 0 for sales that earned what their designs document, 1 for one that did worse, found
// undocumented damage or earned what --fail-on or --expect fail, with a line naming it
// and the rerun command. The unfinished sale's 3 is TestInterrupt's and
// TestMatrixGoesOnPastAnUnfinishedSale's; repro's rule is TestTrackRecord's.
//
// No sale here hangs on a race: lua's purchase is one script, which cannot oversell
// (SAFE in every cell of make bench); none and nolock below take no lock, and 60 buyers
// reading 20 units at once oversell as surely as none did, 70 of 30, in every one of make
// bench's twelve cells. (seed-setnx's oversell is a race: it read SAFE now and then.)
func TestExitStatus(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	dir := t.TempDir()
	// A design that documents nothing and locks nothing: its oversell is undocumented
	// damage.
	nolock := writeFile(t, dir, "nolock.json", `{"name": "nolock",
		"lock": {"acquire": {"lua": "return 1", "keys": ["lock"]}, "release": {"lua": "return 1", "keys": ["lock"]}}}`)
	// A lock that grants every acquire and documents SAFE: its second holders come
	// inside the first one's lease, a broken lock, which no machine's pace excuses.
	granting := writeFile(t, dir, "granting.json", `{"name": "granting", "documented": {"none": ["SAFE"]},
		"lock": {"acquire": {"lua": "return 1", "keys": ["lock"]}, "release": {"lua": "return 1", "keys": ["lock"]}}}`)
	small := []string{"--buyers", "60", "--stock", "20", "--think", "2ms"}
	tests := []struct {
		name string
		args []string
		want int
		line string // in stdout
	}{
		{"run: SAFE", []string{"run", "--lock", "lua"}, bench.ExitOK, "exit 0: every sale earned"},
		{"run: documented OVERSOLD", []string{"run", "--lock", "none"}, bench.ExitOK, "--fail-on CLASS or --expect SAFE fails on them"},
		{"run: --fail-on", []string{"run", "--lock", "none", "--fail-on", "oversold,lost"}, bench.ExitFailed, "which --fail-on names"},
		{"run: --expect, better", []string{"run", "--lock", "lua", "--expect", "OVERSOLD"}, bench.ExitFailed, "not what --expect names (OVERSOLD)"},
		{"run: undocumented damage", []string{"run", "--lock-file", nolock}, bench.ExitFailed, "and the design documents no verdict at all"},
		// none documents OVERSOLD under one client pause, nothing under a rate of them.
		{"run: no verdict documented for the plan", []string{"run", "--lock", "none", "--fault", "client-pause:p=0.5"}, bench.ExitOK,
			"1 with findings where their designs document no verdict"},
		// token documents SAFE under net-latency for holders quicker than the TTL. Here
		// every hold outlives its 3ms lease (PX: set-nx-ex's EX would round it up to a
		// second) in its round trips (2ms ± 1ms a reply) and 2ms of work, with 59 buyers
		// retrying every 1ms: second holders come after a lease outlived, not through a
		// broken lock (33 of 36 holds overlapped; 10 runs of 10 were OUTPACED).
		{"run: worse at the machine's pace", []string{"run", "--lock", "token", "--scenario", "fault-sale", "--fault", "net-latency",
			"--ttl", "3ms", "--retry-interval", "1ms"}, bench.ExitOK, "OUTPACED fault-sale/token/net-latency: "},
		// reliable-list documents SAFE with no fault for workers that ack within the
		// visibility timeout; these work 30ms of a 20ms one, so every task is handed on
		// while its worker, alive, is still at it (126 to 176 duplicates, 4 runs of 4
		// OUTPACED), and no delivery comes under a live lease.
		{"run: a queue worse at the workers' pace", []string{"run", "--queue", "reliable-list", "--work", "30ms", "--visibility", "20ms"},
			bench.ExitOK, "OUTPACED queue-sale (naive fulfil)/reliable-list/none: "},
		{"run: a broken lock is not outpaced", []string{"run", "--lock-file", granting}, bench.ExitFailed, "worse than the SAFE it documents"},
		{"matrix: as documented", []string{"matrix", "--locks", "lua,none", "--faults", "none", "--queues", ""}, bench.ExitOK, "exit 0"},
		{"matrix: --fail-on", []string{"matrix", "--locks", "lua,none", "--faults", "none", "--queues", "", "--fail-on", "OVERSOLD,LOST"}, bench.ExitFailed,
			"exit 1: 1 of 2 sales failed"},
		{"sweep: --expect", []string{"sweep", "--lock", "lua", "--vary", "conns=4,8", "--expect", "SAFE"}, bench.ExitOK, "every sale earned a class --expect names"},
		{"sweep: undocumented damage", []string{"sweep", "--lock-file", nolock, "--lock", "nolock", "--vary", "conns=4,8"}, bench.ExitFailed, "exit 1: 2 of 2 sales failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // after the rest of the test: each a command of its own
			args := append(append(tt.args, small...), "--out", t.TempDir())
			if tt.args[0] == "sweep" {
				args = append(tt.args, "--buyers", "60", "--stock", "20", "--think", "2ms", "--out", t.TempDir())
			}
			code, stdout, stderr := stockbench(t, args...)
			if code != tt.want || !strings.Contains(stdout, tt.line) {
				t.Fatalf("exit %d, want %d with %q:\n%s\n%s", code, tt.want, tt.line, stdout, stderr)
			}
			if code == bench.ExitFailed && !strings.Contains(stdout, "rerun ") {
				t.Errorf("a failing sale without its rerun command:\n%s", stdout)
			}
		})
	}

	// replay holds the reruns to the same rule, and check to its run file's expect.
	out := t.TempDir()
	if code, _, stderr := stockbench(t, append([]string{"run", "--lock", "lua", "--out", out}, small...)...); code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(dirs) != 1 {
		t.Fatalf("want one run directory, got %v", dirs)
	}
	runDir := dirs[0]
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, bench.ExitOK}, {[]string{"--expect", "LOST"}, bench.ExitFailed}} {
		code, stdout, stderr := stockbench(t, append([]string{"replay", runDir, "--out", t.TempDir()}, tc.args...)...)
		if code != tc.want {
			t.Errorf("replay %v: exit %d, want %d:\n%s\n%s", tc.args, code, tc.want, stdout, stderr)
		}
	}
	file := writeFile(t, dir, "expect.json", `{"locks": ["lua"], "scenarios": ["flash-sale"], "faults": ["none"],
		"settings": {"buyers": 40, "stock": 10}, "thresholds": {"*": ["oversold == 0"]}, "expect": ["OVERSOLD"]}`)
	code, stdout, stderr := stockbench(t, "check", file, "--out", t.TempDir())
	if code != bench.ExitFailed || !strings.Contains(stdout, "check: PASS") || !strings.Contains(stdout, "not what --expect names") {
		t.Errorf("check with expect OVERSOLD of a SAFE lua: exit %d, want 1 with its thresholds held:\n%s\n%s", code, stdout, stderr)
	}
	// Bad classes are bad input: one line, exit 2.
	for _, args := range [][]string{{"run", "--lock", "lua", "--fail-on", "OVERSOLDD"}, {"matrix", "--expect", ""}} {
		code, stdout, stderr := stockbench(t, append(args, "--out", filepath.Join(t.TempDir(), "none"))...)
		if code != bench.ExitUsage || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%v: exit %d, want 2 and one line:\n%s%s", args, code, stdout, stderr)
		}
	}
}
