package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// stockbenchIn runs the command in dir, as a user who ran init there would, with
// Debian's interpreters first on PATH (the adapters' runtimes scripts/ensure-adapters.sh
// installs, where another python3 may come first).
func stockbenchIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH"))
	return runCmd(t, cmd)
}

// initAndCheck runs init with route's flags in a new directory, then check on its run
// file and on the broken example's, each with --junit read by junitparser: the first
// passes every case, the second fails (exit 1) on the broken lock stuck under
// crash-holder. Both are certain: a lock with a TTL outlives no dead holder, and one
// without keeps the dead holder's lock for good (the 5th holder dies holding it).
// build, when set, runs in the directory first (a Go adapter's go build).
func initAndCheck(t *testing.T, build []string, route ...string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mine")
	if code, stdout, stderr := stockbench(t, append([]string{"init", "--dir", dir}, route...)...); code != bench.ExitOK || !strings.Contains(stdout, "stockbench check stockbench-broken.json") {
		t.Fatalf("init %v: exit %d:\n%s\n%s", route, code, stdout, stderr)
	}
	if len(build) > 0 {
		cmd := exec.Command(build[0], build[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH=/usr/bin:"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", build, err, out)
		}
	}
	for _, tc := range []struct {
		file  string
		want  int
		case0 string
	}{
		{"stockbench.json", bench.ExitOK, "fault-sale.mylock\tcrash-holder\tpassed\t"},
		{"stockbench-broken.json", bench.ExitFailed, "fault-sale.mylock-broken\tcrash-holder\tfailure\tfault-sale/mylock-broken/crash-holder: stuck == 0: got 1"},
	} {
		xml := filepath.Join(dir, tc.file+".xml")
		code, stdout, stderr := stockbenchIn(t, dir, "check", tc.file, "--junit", xml)
		if code != tc.want {
			t.Fatalf("init %v, check %s: exit %d, want %d:\n%s\n%s", route, tc.file, code, tc.want, stdout, stderr)
		}
		lines := readJUnit(t, xml)
		found := false
		for _, l := range lines {
			found = found || strings.HasPrefix(l, tc.case0)
		}
		if !found {
			t.Errorf("init %v, check %s: want a case %q, got:\n%s", route, tc.file, tc.case0, strings.Join(lines, "\n"))
		}
	}
}

// TestInit: init's lock file checks as written: its own lock passes, the broken example
// fails; an existing file, an unknown language or no route is one line and exit 2, and
// writes nothing. The adapters in every language and the kit are TestInitEveryRoute's,
// in the long suite (a check of a Python adapter starts dozens of interpreters).
func TestInit(t *testing.T) {
	t.Parallel()
	t.Run("lock-file", func(t *testing.T) {
		t.Parallel()
		initAndCheck(t, nil, "--lock-file")
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stockbench.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--lock-file"}, {"--adapter", "cobol"}, {}, {"--go", "--lock-file"}, {"--go", "--name", "My Lock"}, {"--adapter", "python", "--from", "laravel"}, {"--adapter", "php", "--from", "cakephp"}} {
		code, stdout, stderr := stockbench(t, append([]string{"init", "--dir", dir}, args...)...)
		entries, _ := os.ReadDir(dir)
		if code != bench.ExitUsage || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || stdout != "" || len(entries) != 1 {
			t.Errorf("init %v: exit %d, %d files, want 2, one line and nothing written:\n%s%s", args, code, len(entries), stdout, stderr)
		}
	}
}
