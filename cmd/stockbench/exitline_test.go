package main

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/docs"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// exitLine is a command's last line: "exit N: why", after "stockbench: " when it is
// the one line of a command refused or stopped by an error (on stderr).
var exitLine = regexp.MustCompile(`^(stockbench: )?exit (\d+): \S`)

// endsOn asserts that out, all a command printed (stdout and stderr as a terminal shows
// them), ends on the line of exit status code, which the command returned and want
// names, and that no earlier line tells another ending.
func endsOn(t *testing.T, out string, code, want int) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	m := exitLine.FindStringSubmatch(last)
	switch {
	case code != want:
		t.Errorf("exit %d, want %d:\n%s", code, want, out)
	case m == nil:
		t.Errorf("exit %d; the last line is not its exit line: %q\n%s", code, last, out)
	case m[2] != strconv.Itoa(code):
		t.Errorf("exit %d; the last line says %q", code, last)
	}
	for _, l := range lines[:len(lines)-1] {
		if exitLine.MatchString(l) {
			t.Errorf("an earlier line tells an ending too: %q", l)
		}
	}
}

// combined runs the command and returns its exit code and everything it printed, in
// the order it printed it.
func combined(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order is kept
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// exitCase is a command run to one of its exit statuses.
type exitCase struct {
	args []string
	want int
}

// exitFixtures are what the commands of exitCases read: run directories, run files,
// design files, a server for shards.
type exitFixtures struct {
	dir                                   string
	safe, harmful, unrepeatable, broken   string // run directories
	pass, fail, malformed, lockOK, noLock string // files
	redisURL                              string
}

func newExitFixtures(t *testing.T) exitFixtures {
	t.Helper()
	dir := t.TempDir()
	x := exitFixtures{dir: dir}
	small := []string{"--buyers", "60", "--stock", "20", "--think", "2ms"}
	x.lockOK = writeFile(t, dir, "lockok.json", `{"name": "mylock", "documented": {"none": ["SAFE"]},
		"lock": {"acquire": {"lua": "return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2])", "keys": ["lock"], "args": ["token", "ttl_ms"]},
		"release": {"lua": "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", "keys": ["lock"], "args": ["token"]}}}`)
	// The same design name, locking nothing: the change the gate must stop.
	x.noLock = writeFile(t, dir, "nolock.json", `{"name": "mylock",
		"lock": {"acquire": {"lua": "return 1", "keys": ["lock"]}, "release": {"lua": "return 1", "keys": ["lock"]}}}`)
	run := func(name string, args ...string) string {
		out := filepath.Join(dir, name)
		if code, text := combined(t, append(append(args, small...), "--out", out)...); code > bench.ExitFailed {
			t.Fatalf("%v: exit %d:\n%s", args, code, text)
		}
		return filepath.Dir(firstResults(t, out))
	}
	x.safe = run("safe", "run", "--lock-file", x.lockOK)
	x.broken = run("broken", "run", "--lock-file", x.noLock)
	x.harmful = run("harmful", "run", "--lock", "none")
	// A record whose sale says OVERSOLD, which lua's purchase never earns again.
	x.unrepeatable = run("unrepeatable", "run", "--lock", "lua")
	f, err := results.ReadRun(x.unrepeatable)
	if err != nil {
		t.Fatal(err)
	}
	f.Runs[0].Verdict.Class = oracle.ClassOversold
	if err := results.WriteFile(filepath.Join(x.unrepeatable, "results.json"), f); err != nil {
		t.Fatal(err)
	}
	sale := `"scenarios": ["flash-sale"], "faults": ["none"], "settings": {"buyers": 60, "stock": 20, "think": "2ms"}`
	x.pass = writeFile(t, dir, "pass.json", `{"locks": ["lua"], `+sale+`, "thresholds": {"*": ["oversold == 0"]}}`)
	x.fail = writeFile(t, dir, "fail.json", `{"locks": ["none"], `+sale+`, "thresholds": {"*": ["oversold == 0", "lost == 0"]}}`)
	x.malformed = writeFile(t, dir, "malformed.json", `{"locks": ["lua"], "thresholds": {"*": ["oversold =="]}}`)
	x.redisURL = "redis://" + redistest.Start(t).Addr()
	return x
}

// exitCases are each command run to each exit status it returns, but those of the
// signals and a dead server, which TestExitLinesOfAnEndCutShort runs, and explore's
// findings, which need a budget of minutes (TestExploreExitLines, long suite).
func (x exitFixtures) exitCases(t *testing.T) map[string]exitCase {
	out := func() string { return filepath.Join(t.TempDir(), "runs") }
	small := []string{"--buyers", "60", "--stock", "20", "--think", "2ms"}
	sale := func(args ...string) []string { return append(append(args, small...), "--out", out()) }
	shards := filepath.Join(x.dir, "shards")
	return map[string]exitCase{
		"help 0":           {[]string{"help"}, bench.ExitOK},
		"help 2":           {nil, bench.ExitUsage},
		"unknown 2":        {[]string{"sell"}, bench.ExitUsage},
		"version 0":        {[]string{"version"}, bench.ExitOK},
		"version 2":        {[]string{"version", "--long"}, bench.ExitUsage},
		"init 0":           {[]string{"init", "--lock-file", "--dir", t.TempDir()}, bench.ExitOK},
		"init 2":           {[]string{"init", "--adapter", "cobol", "--dir", t.TempDir()}, bench.ExitUsage},
		"list 0":           {[]string{"list"}, bench.ExitOK},
		"list 2":           {[]string{"list", "--stonks"}, bench.ExitUsage},
		"run 0":            {sale("run", "--lock", "lua"), bench.ExitOK},
		"run -h 0":         {[]string{"run", "-h"}, bench.ExitOK},
		"run 1":            {sale("run", "--lock", "none", "--fail-on", "OVERSOLD,LOST"), bench.ExitFailed},
		"run 2":            {sale("run", "--lock", "nope"), bench.ExitUsage},
		"sweep 0":          {sale("sweep", "--lock", "lua", "--vary", "conns=4,8"), bench.ExitOK},
		"sweep 1":          {sale("sweep", "--lock", "lua", "--vary", "conns=4,8", "--expect", "OVERSOLD"), bench.ExitFailed},
		"sweep 2":          {[]string{"sweep", "--lock", "lua"}, bench.ExitUsage},
		"matrix 0":         {sale("matrix", "--locks", "lua,none", "--faults", "none", "--queues", ""), bench.ExitOK},
		"matrix 1":         {sale("matrix", "--locks", "lua,none", "--faults", "none", "--queues", "", "--fail-on", "OVERSOLD"), bench.ExitFailed},
		"matrix 2":         {[]string{"matrix", "--locks", "lua", "--faults", "nope"}, bench.ExitUsage},
		"check 0":          {[]string{"check", x.pass, "--out", out()}, bench.ExitOK},
		"check 1":          {[]string{"check", x.fail, "--out", out()}, bench.ExitFailed},
		"check 2":          {[]string{"check", x.malformed, "--out", out()}, bench.ExitUsage},
		"report 0":         {[]string{"report", x.safe, "--out", t.TempDir()}, bench.ExitOK},
		"report 2":         {[]string{"report", t.TempDir()}, bench.ExitUsage},
		"replay 0":         {[]string{"replay", copyRun(t, x.safe), "--out", out()}, bench.ExitOK},
		"replay 1":         {[]string{"replay", copyRun(t, x.safe), "--expect", "LOST", "--out", out()}, bench.ExitFailed},
		"replay 2":         {[]string{"replay"}, bench.ExitUsage},
		"shrink 0":         {[]string{"shrink", x.harmful, "--budget", "20s", "--out", out()}, bench.ExitOK},
		"shrink 1":         {[]string{"shrink", x.unrepeatable, "--tries", "1", "--out", out()}, bench.ExitFailed},
		"shrink 2":         {[]string{"shrink", x.safe}, bench.ExitUsage},
		"explore 2":        {[]string{"explore", "--lock", "lua", "--budget", "1s"}, bench.ExitUsage},
		"analyse 0":        {[]string{"analyse", "--render", copyRun(t, filepath.Join("..", "..", "docs", "analyses"))}, bench.ExitOK},
		"analyse 2":        {[]string{"analyse", "--out", out()}, bench.ExitUsage},
		"merge 0":          {[]string{"merge", filepath.Join(shards, "r1"), "--out", out()}, bench.ExitOK},
		"merge 2":          {[]string{"merge", t.TempDir()}, bench.ExitUsage},
		"gate 0":           {[]string{"gate", "--baseline", x.safe, "--current", x.safe}, bench.ExitOK},
		"gate 1":           {[]string{"gate", "--baseline", x.safe, "--current", x.broken}, bench.ExitFailed},
		"gate 2":           {[]string{"gate", "--current", x.safe}, bench.ExitUsage},
		"compare 0":        {[]string{"compare", x.safe, x.broken}, bench.ExitOK},
		"compare 2":        {[]string{"compare", x.safe}, bench.ExitUsage},
		"baseline 0":       {[]string{"baseline", "--from", x.safe, "--to", filepath.Join(t.TempDir(), "b.json")}, bench.ExitOK},
		"baseline 2":       {[]string{"baseline", "--from", t.TempDir(), "--to", filepath.Join(t.TempDir(), "b.json")}, bench.ExitUsage},
		"guarantees 0":     {[]string{"guarantees", x.queueRun(t)}, bench.ExitOK},
		"guarantees 2":     {[]string{"guarantees", x.safe}, bench.ExitUsage},
		"repro 0":          {[]string{"repro"}, bench.ExitOK},
		"repro 2":          {[]string{"repro", "no-such-bug"}, bench.ExitUsage},
		"perf 0":           {[]string{"perf", "--sales", "2000", "--rss-buyers", "0", "--rounds", "1", "--adapters=false", "--purchase-buyers", "20", "--purchase-rate", "1000"}, bench.ExitOK},
		"perf 2":           {[]string{"perf", "--sales", "0"}, bench.ExitUsage},
		"plan 0":           {[]string{"plan", "--buyers", "10000", "--rate", "100", "--calibrate", "1000"}, bench.ExitOK},
		"plan 2":           {[]string{"plan", "--buyers", "10000"}, bench.ExitUsage},
		"run --shard 2":    {[]string{"run", "--lock", "lua", "--shard", "2/1"}, bench.ExitUsage},
		"check --format 0": {[]string{"check", x.pass, "--format", "github", "--out", out()}, bench.ExitOK},
	}
}

// queueRun is a run directory of one small queue sale, for guarantees.
func (x exitFixtures) queueRun(t *testing.T) string {
	out := filepath.Join(t.TempDir(), "runs")
	if code, text := combined(t, "run", "--queue", "list", "--buyers", "20", "--stock", "10", "--out", out); code != 0 {
		t.Fatalf("queue run: exit %d:\n%s", code, text)
	}
	return filepath.Dir(firstResults(t, out))
}

// copyRun copies a run directory, for a command that writes into it (replay).
func copyRun(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestEveryCommandEndsOnItsExitLine runs each command to each exit status it returns
// and reads what it printed last: one line that says the status it returned and why
// ("exit 1: 2 of 12 thresholds broken, 0 regressions"; "stockbench: exit 2: run:
// unknown lock ..." for a command refused), and no earlier line that tells another.
// Every command of docs.Commands is run to 0 and to 2, and to 1 where it has one.
func TestEveryCommandEndsOnItsExitLine(t *testing.T) {
	t.Parallel() // whole commands of their own: see TestMain
	x := newExitFixtures(t)
	cases := x.exitCases(t)
	for _, c := range docs.Commands {
		for _, want := range []int{bench.ExitOK, bench.ExitUsage} {
			if _, ok := cases[fmt.Sprintf("%s %d", c.Name, want)]; !ok && c.Name != "explore" {
				t.Errorf("no case runs %s to exit %d", c.Name, want)
			}
		}
	}
	// The shards' runs, side by side, come before the merge.
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			code, out := combined(t, "run", "--lock", "lua", "--shard", fmt.Sprintf("%d/2", i), "--run-id", "r1",
				"--redis-url", x.redisURL, "--out", filepath.Join(x.dir, "shards"), "--buyers", "40", "--stock", "10")
			endsOn(t, out, code, bench.ExitOK)
		})
	}
	wg.Wait()
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		c := cases[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			code, out := combined(t, c.args...)
			endsOn(t, out, code, c.want)
		})
	}
}

// TestExitLinesOfAnEndCutShort: a run interrupted or whose Redis dies ends on the line
// of 130 or 3, with why, as any other ending; so does one interrupted before its first
// sale ended, whose line is the one it prints.
func TestExitLinesOfAnEndCutShort(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		after string // the line to wait for before the end
		end   func(t *testing.T, s *exec.Cmd, redisLine string)
		want  int
	}{
		{"ctrl-c", "[1/1]", func(t *testing.T, c *exec.Cmd, _ string) { c.Process.Signal(syscall.SIGINT) }, bench.ExitInterrupted},
		{"redis dies", "[1/1]", func(t *testing.T, _ *exec.Cmd, line string) { crash(t, line) }, bench.ExitUnfinished},
		{"ctrl-c at the start", "redis: ", func(t *testing.T, c *exec.Cmd, _ string) { c.Process.Signal(syscall.SIGINT) }, bench.ExitInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out syncBuffer
			cmd := exec.Command(binary, "run", "--lock", "set-nx-ex", "--buyers", "50", "--stock", "100", "--think", "200ms",
				"--redis", "process", "--out", filepath.Join(t.TempDir(), "runs"))
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			redisLine := out.waitFor(t, "redis: ")
			out.waitFor(t, tc.after)
			if tc.after == "[1/1]" {
				time.Sleep(time.Second) // a few sales in
			}
			tc.end(t, cmd, redisLine)
			cmd.Wait()
			endsOn(t, out.String(), cmd.ProcessState.ExitCode(), tc.want)
		})
	}
}

// syncBuffer is what a running command printed so far, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits up to 30 s for a line holding text and returns it.
func (s *syncBuffer) waitFor(t *testing.T, text string) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(s.String(), "\n") {
			if strings.Contains(l, text) {
				return l
			}
		}
	}
	t.Fatalf("no line with %q in 30 s:\n%s", text, s.String())
	return ""
}
