package analysis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
)

// reproDir makes DIR/repro/ID with a manifest (none when manifest is ""), an executable
// run.sh of script, and DIR/reports/ID.md when report; it returns DIR.
func reproDir(t *testing.T, id, manifest, script string, report bool) string {
	t.Helper()
	dir := t.TempDir()
	rd := filepath.Join(dir, ReproDir, id)
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	if manifest != "" {
		if err := os.WriteFile(filepath.Join(rd, reproManifest), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(rd, "run.sh"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	if report {
		os.MkdirAll(filepath.Join(dir, ReportsDir), 0o755)
		if err := os.WriteFile(filepath.Join(dir, ReportsDir, id+".md"), []byte("# report\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestRepros: a reproduction is checked whole before anything runs, and each kind of
// bad one is named in one line.
func TestRepros(t *testing.T) {
	const good = `{"faults": "none", "class": "DUPLICATED", "command": ["./run.sh"], "timeout": "10s"}`
	tests := []struct {
		name, manifest string
		report         bool
		want           string // in the error; "" for none
	}{
		{"whole", good, true, ""},
		{"no manifest", "", true, "lib-1: no repro.json naming its command"},
		{"no command", `{"faults": "none", "class": "DUPLICATED"}`, true, "repro.json names no command"},
		{"command not there", `{"faults": "none", "class": "LOST", "command": ["./absent.sh"]}`, true, `its command "./absent.sh" is not there`},
		{"program not on the PATH", `{"faults": "none", "class": "LOST", "command": ["no-such-interpreter-here", "x"]}`, true, `its command "no-such-interpreter-here" is not there`},
		{"unknown fault", `{"faults": "solar-flare", "class": "LOST", "command": ["./run.sh"]}`, true, `unknown fault "solar-flare"`},
		{"a deployment's cell", `{"faults": "redis-restart:persist=aof-everysec", "class": "DUPLICATED", "command": ["./run.sh"]}`, true, ""},
		{"a deployment's cell over servers", `{"faults": "redis-restart:servers=2 over 3 servers", "class": "DUPLICATED", "command": ["./run.sh"]}`, true, ""},
		{"a bad setting", `{"faults": "redis-restart:persist=sometimes", "class": "LOST", "command": ["./run.sh"]}`, true, `unknown fault "redis-restart:persist=sometimes"`},
		{"SAFE is no finding", `{"faults": "none", "class": "SAFE", "command": ["./run.sh"]}`, true, `"SAFE" is no class of finding`},
		{"unknown field", `{"faults": "none", "class": "LOST", "cmd": ["./run.sh"]}`, true, `unknown field "cmd"`},
		{"bad timeout", `{"faults": "none", "class": "LOST", "command": ["./run.sh"], "timeout": "soon"}`, true, `timeout: want a positive duration, got "soon"`},
		{"no report", good, false, "no report at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := reproDir(t, "lib-1", tt.manifest, "exit 1\n", tt.report)
			rs, err := Repros(dir, "lib")
			switch {
			case tt.want == "" && (err != nil || len(rs) != 1 || rs[0].ID != "lib-1" || rs[0].Class != oracle.ClassDuplicated):
				t.Errorf("got %+v, %v; want lib-1, DUPLICATED", rs, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n")):
				t.Errorf("got error %v, want one line with %q", err, tt.want)
			}
		})
	}
	// Another library's reproductions, and none at all, are no error.
	if rs, err := Repros(reproDir(t, "other-1", good, "exit 1\n", true), "lib"); err != nil || len(rs) != 0 {
		t.Errorf("another library's: got %v, %v", rs, err)
	}
	if rs, err := Repros(t.TempDir(), "lib"); err != nil || len(rs) != 0 {
		t.Errorf("none: got %v, %v", rs, err)
	}
}

// TestReproRun: a run keeps the end of what the program printed and how it exited, is
// stopped at its timeout, and leaves nothing it started behind.
func TestReproRun(t *testing.T) {
	tests := []struct {
		name, script, timeout string
		exit                  int
		shows                 bool
		out                   string
	}{
		{"shows the break", "echo 'retried after 3 ms, retry_after 1 s'\nexit 1\n", "", 1, true, "retried after 3 ms"},
		{"does not show it", "echo 'held throughout'\nexit 0\n", "", 0, false, "held throughout"},
		{"fails to run", "echo 'cannot start redis-server' >&2\nexit 3\n", "", 3, false, "cannot start redis-server"},
		{"stopped at its timeout", "echo waiting\nsleep 30\n", "300ms", -1, false, "(stopped after 300ms)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := `{"faults": "none", "class": "LOST", "command": ["./run.sh"]`
			if tt.timeout != "" {
				m += `, "timeout": "` + tt.timeout + `"`
			}
			dir := reproDir(t, "lib-1", m+"}", tt.script, true)
			rs, err := Repros(dir, "lib")
			if err != nil {
				t.Fatal(err)
			}
			began := time.Now()
			run := rs[0].Run(context.Background())
			if run.Exit != tt.exit || run.Shows() != tt.shows || !strings.Contains(strings.Join(run.Output, "\n"), tt.out) {
				t.Errorf("got exit %d, shows %v, output %q; want exit %d, shows %v, with %q", run.Exit, run.Shows(), run.Output, tt.exit, tt.shows, tt.out)
			}
			if time.Since(began) > 10*time.Second {
				t.Errorf("the run took %s", time.Since(began))
			}
		})
	}
	// A server the program started and left running goes with it.
	dir := reproDir(t, "lib-1", `{"faults": "none", "class": "LOST", "command": ["./run.sh"]}`, "sleep 60 &\necho $! > child.pid\nexit 1\n", true)
	rs, _ := Repros(dir, "lib")
	if run := rs[0].Run(context.Background()); !run.Shows() {
		t.Fatalf("got %+v", run)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReproDir, "lib-1", "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(b))
	for i := 0; i < 50; i++ {
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return // gone, or a zombie its parent's parent reaps
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the program's child %s is still running", pid)
	if n, err := parsePid(pid); err == nil {
		syscall.Kill(n, syscall.SIGKILL)
	}
}

func parsePid(s string) (int, error) {
	var n int
	_, err := fmt.Sscan(s, &n)
	return n, err
}

// TestConfirmedByItsReproduction: a finding above its control is confirmed only by a
// run of its reproduction that showed it; one that did not show it says so.
func TestConfirmedByItsReproduction(t *testing.T) {
	an := fixed()
	// The record's first finding, OVERSOLD under none, breaks exclusion with 18 of 20
	// reruns: above zero.
	f := an.Findings()[0]
	if f.Faults != "none" || f.Class != oracle.ClassOversold {
		t.Fatalf("the fixture's first finding is %s under %s", f.Class, f.Faults)
	}
	for _, tt := range []struct {
		name      string
		repros    []ReproRun
		confirmed bool
		why       string
	}{
		{"none", nil, false, "but no standalone reproduction shows it yet"},
		{"another finding's", []ReproRun{{ID: "lib-2", Faults: "evict", Class: oracle.ClassOversold, Exit: 1}}, false, "but no standalone reproduction shows it yet"},
		{"did not show it", []ReproRun{{ID: "lib-1", Faults: "none", Class: oracle.ClassOversold, Exit: 0}}, false, "its standalone reproduction, lib-1, did not show it (exit 0: it did not show the break)"},
		{"showed it", []ReproRun{{ID: "lib-1", Faults: "none", Class: oracle.ClassOversold, Exit: 1}}, true, "and its standalone reproduction, lib-1, shows it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			an := fixed()
			an.Record.Repros = tt.repros
			c := an.Confirmation(an.Findings()[0])
			if !c.Statistics || c.Confirmed != tt.confirmed || !strings.Contains(c.Why, tt.why) {
				t.Errorf("got %+v, want confirmed %v, why with %q", c, tt.confirmed, tt.why)
			}
			page := an.Page()
			if tt.confirmed != strings.Contains(page, "**Confirmed**") {
				t.Errorf("the page does not say confirmed %v:\n%s", tt.confirmed, page)
			}
			if len(tt.repros) > 0 && !strings.Contains(page, "[repro/"+tt.repros[0].ID+"](repro/"+tt.repros[0].ID+"/)") {
				t.Errorf("the page does not link its reproduction:\n%s", page)
			}
			if tt.confirmed && strings.Contains(page, "Draft report") {
				t.Errorf("a finding with its report still gets a draft")
			}
		})
	}
}

// TestCommittedReproductions: each reproduction in docs/analyses is whole (its manifest,
// its command, its report), and run here still shows its break, as its page says: a
// release that fixed it, or a reproduction that rotted, fails here. A machine without
// the library's language skips it, unless STOCKBENCH_REQUIRE_ADAPTERS is set (CI).
func TestCommittedReproductions(t *testing.T) {
	dir := filepath.Join("..", "..", "docs", "analyses")
	all, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	ids, _ := filepath.Glob(filepath.Join(dir, ReproDir, "*"))
	if len(ids) == 0 {
		t.Fatal("no reproduction in docs/analyses/repro")
	}
	for _, an := range all {
		rs, err := Repros(dir, an.Claims.Library)
		if err != nil && strings.Contains(err.Error(), "is not there") && os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") == "" {
			t.Logf("%s: skipped: %v", an.Claims.Library, err)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			t.Run(r.ID, func(t *testing.T) {
				recorded := slices.IndexFunc(an.Record.Repros, func(run ReproRun) bool { return run.ID == r.ID && run.Shows() })
				if recorded < 0 {
					t.Errorf("%s's record has no run of %s that showed it: make analyses LIBS=%s", an.Claims.Library, r.ID, an.Claims.Library)
				}
				// A reproduction is a race run once: up to three tries, so that one that
				// shows its break in 8 runs of 10 fails here 1 time in 125.
				var run ReproRun
				for try := 1; try <= 3; try++ {
					if run = r.Run(context.Background()); run.Shows() {
						return
					}
					t.Logf("%s, try %d: %s", r.ID, try, run.Outcome())
				}
				t.Errorf("%s no longer shows %s under %s in 3 tries: %s\n%s", r.ID, r.Class, r.Faults, run.Outcome(), strings.Join(run.Output, "\n"))
			})
		}
	}
}
