package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/repro"
	"github.com/stockbench/stockbench/internal/trackrecord"
	"github.com/stockbench/stockbench/results"
)

// TestRecordEntries: every bug of the record names where it was reported, says what its
// sale shows and why no fixed release runs when none does, and its sales are command
// lines run takes, checked before any server starts.
func TestRecordEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range trackrecord.All() {
		switch {
		case seen[e.Name]:
			t.Errorf("%s: two entries of that name", e.Name)
		case len(e.Issues) == 0 || e.Library == "" || e.Shows == "":
			t.Errorf("%s: want its issues, library and what it shows", e.Name)
		case e.Fixed == nil && e.NoFix == "":
			t.Errorf("%s: no fixed release and no reason why", e.Name)
		case (e.Buggy.Finding == "") == (e.Buggy.Crash == ""):
			t.Errorf("%s: want a finding or a crash, one of them", e.Name)
		case e.Fixed != nil && e.Buggy.Finding == "":
			t.Errorf("%s: a fixed release is judged by the finding the buggy one shows", e.Name)
		}
		seen[e.Name] = true
		for _, is := range e.Issues {
			if !strings.HasPrefix(is.URL(), "https://github.com/"+is.Repo+"/") || strings.Count(is.Repo, "/") != 1 {
				t.Errorf("%s: issue %s reads as %s", e.Name, is, is.URL())
			}
		}
	}
	if err := repro.Check(repro.Config{All: true, Out: t.TempDir(), Read: readRunLine}); err != nil {
		t.Errorf("the record's sales: %v", err)
	}
	if code, _, stderr := stockbench(t, "repro", "kombu-338"); code != bench.ExitUsage || !strings.Contains(stderr, `unknown bug "kombu-338"`) {
		t.Errorf("an unknown bug: want exit 2 naming it, got %d: %s", code, stderr)
	}
}

// TestTrackRecord: every bug of the record reproduces, one command from the checkout,
// on the release that has it (Debian's), and each fixed release the record names passes.
// kombu-337 waits for the workers' restore at 100 s; phpredis-2723 starts a cluster.
func TestTrackRecord(t *testing.T) {
	needPHP(t)
	for what, argv := range map[string][]string{
		"Debian's Python with Celery": {"/usr/bin/python3", "-c", "import celery"},
		"Ruby with Debian's Sidekiq":  {"ruby", "-e", `require "sidekiq"; require "redis-namespace"`},
	} {
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
				t.Fatalf("%s is missing: %v", what, err)
			}
			t.Skipf("%s is missing (%v); scripts/ensure-adapters.sh installs it", what, err)
		}
	}
	t.Parallel() // minutes of waiting on kombu's timer, little CPU
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "repro", "--all", "--out", out)
	for _, e := range trackrecord.All() {
		want := e.Name + " on " + e.Buggy.Version + ": reproduced"
		if !strings.Contains(stdout, want) {
			t.Errorf("want %q, got:\n%s", want, stdout)
		}
		if e.Fixed != nil && !strings.Contains(stdout, e.Name+" on "+e.Fixed.Version+": passes") {
			t.Errorf("%s: want the fixed release to pass, got:\n%s", e.Name, stdout)
		}
	}
	if code != bench.ExitOK {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The record as one matrix: a row per sale that left one, a check per sale.
	_, dir, found := strings.Cut(stdout, "the record as one matrix, a row per sale: ")
	f, err := results.Read(filepath.Join(strings.TrimSpace(dir), "results.json"))
	if !found || err != nil {
		t.Fatalf("want the record's matrix written, got %v:\n%s", err, stdout)
	}
	cases := 0
	for _, e := range trackrecord.All() {
		cases++
		if e.Fixed != nil {
			cases++
		}
	}
	if len(f.Checks) != cases || len(results.Broken(f.Checks)) > 0 || len(f.Runs) < cases-1 {
		t.Errorf("want %d checks held and a row per sale (a crash leaves none), got %d runs, checks %+v", cases, len(f.Runs), f.Checks)
	}
}
