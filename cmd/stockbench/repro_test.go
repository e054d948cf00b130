package main

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/repro"
	"github.com/stockbench/stockbench/internal/trackrecord"
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
