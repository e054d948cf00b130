package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// TestExploreBadInput: each bad command line is one line and exit 2, and creates
// nothing.
func TestExploreBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"explore"},
		{"explore", "--lock", "nosuch"},
		{"explore", "--lock", "lua", "--queue", "stream"},
		{"explore", "--lock", "lua", "--budget", "1s"},
		{"explore", "--lock", "lua", "--confirm", "0"},
		{"explore", "--lock", "lua", "--faults", "nosuch"},
		{"explore", "--lock", "lua", "--faults", "worker-crash"},
		{"explore", "--lock", "lua", "--parallel", "0"},
		{"explore", "--lock", "lua", "stray"},
		{"explore", "--lock", "lua", "--cpuprofile", "/no/such/dir/cpu.prof"},
	} {
		out := t.TempDir()
		code, _, stderr := stockbench(t, append(args, "--out", out)...)
		entries, _ := os.ReadDir(out)
		if code != bench.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || len(entries) != 0 {
			t.Errorf("%q: exit %d, %d entries written, stderr %q; want 2, nothing, one line", args, code, len(entries), stderr)
		}
	}
}
