//go:build long

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pairedTrial is the trial the paired gate's test runs: token against lua on a closed
// flash sale with no think time, small enough for the suite's time, where 5 ms more in
// every release is a slowdown the pairs see every time.
var pairedTrial = []string{"--", "--scenarios", "flash-sale", "--locks", "lua,token", "--queues", "", "--buyers", "500", "--stock", "500", "--think", "0"}

// TestGateBaseTimesTheChange: a clone of this checkout timed against its own commit
// passes; with one more round trip in token's release (a PING), timed against the commit
// before it, it fails on token's commands per sale, one purchase at a time; with that
// release 5 ms slower as well (a sleep, as a handler that does more work), timed against
// the PING's commit, it fails on token's time (its median or its sales/s, in the race or
// one at a time: which of them clears Holm's bound over the twelve figures varies). Neither flags a row the change did not
// touch. Each is one job of pairs; the paired test's false alarms are Holm-bounded at
// --alpha over the rows (docs/ci.md measures them over 20 jobs beside a busy neighbour).
func TestGateBaseTimesTheChange(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	clone := filepath.Join(t.TempDir(), "clone")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Dir = filepath.Dir(clone)
		if _, err := os.Stat(clone); err == nil {
			cmd.Dir = clone
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("clone", "-q", "--no-hardlinks", strings.TrimSpace(string(top)), clone)
	bin := filepath.Join(clone, "bin", "stockbench")
	gate := func(base string, pairs string) (int, string, string) {
		t.Helper()
		build := exec.Command("go", "build", "-o", bin, "./cmd/stockbench")
		build.Dir = clone
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build the clone: %v\n%s", err, out)
		}
		cmd := exec.Command(bin, append([]string{"gate", "--base", base, "--pairs", pairs, "--min-effect", "0.1"}, pairedTrial...)...)
		cmd.Dir = clone
		return runCmd(t, cmd)
	}

	code, stdout, stderr := gate("HEAD", "5")
	if code != 0 {
		t.Fatalf("the build against itself: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "| flash-sale/token/none | p50 | 5 |") {
		t.Errorf("the table lacks token's row:\n%s", stdout)
	}

	token := filepath.Join(clone, "lockimpl", "token.go")
	src, err := os.ReadFile(token)
	if err != nil {
		t.Fatal(err)
	}
	release := "\tn, err := releaseScript.Run(ctx, l.client, []string{l.key}, l.token).Int64()"
	if !strings.Contains(string(src), release) {
		t.Fatalf("token's release is no longer %q: update the test's change", release)
	}
	change := func(what, code string) {
		t.Helper()
		src, _ := os.ReadFile(token)
		os.WriteFile(token, []byte(strings.Replace(string(src), release, code+"\n"+release, 1)), 0o644)
		git("commit", "-q", "-am", what)
	}
	// flagged fails unless the change's gate exits 1 with a line of want flagged (any of
	// them), and only token's rows.
	flagged := func(what string, code int, stdout, stderr string, want ...string) {
		t.Helper()
		if code != 1 {
			t.Fatalf("%s: exit %d, want 1\n%s\n%s", what, code, stdout, stderr)
		}
		for _, line := range strings.Split(stdout, "\n") {
			if strings.Contains(line, "**slower**") && !strings.HasPrefix(line, "| flash-sale/token/none |") && !strings.HasPrefix(line, "| one at a time: flash-sale/token/none |") {
				t.Errorf("%s: a row the change did not touch flagged: %s", what, line)
			}
		}
		if !slices.ContainsFunc(strings.Split(stdout, "\n"), func(l string) bool {
			return strings.Contains(l, "**slower**") && slices.ContainsFunc(want, func(w string) bool { return strings.HasPrefix(l, w) })
		}) {
			t.Errorf("%s: want a line starting with one of %q flagged:\n%s", what, want, stdout)
		}
	}

	change("one more round trip in token's release", "\tl.client.Ping(ctx)")
	code, stdout, stderr = gate("HEAD~1", "3")
	flagged("a PING", code, stdout, stderr, "| one at a time: flash-sale/token/none | cmds/sale | 3 | +1.00 a sale")
	if strings.Contains(stdout, "| one at a time: flash-sale/lua/none | cmds/sale | 3 | +1.00") {
		t.Errorf("lua's count moved with token's release:\n%s", stdout)
	}

	change("token's release 5 ms slower", "\ttime.Sleep(5 * time.Millisecond)")
	code, stdout, stderr = gate("HEAD~1", "5")
	flagged("a slower release", code, stdout, stderr, "| flash-sale/token/none | p50 |", "| flash-sale/token/none | sales/s |",
		"| one at a time: flash-sale/token/none | p50 |", "| one at a time: flash-sale/token/none | sales/s |")
}
