package replay

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestTallyKeepsWhatAnInterruptedReplayDidNotRerun: a sale no rerun of which ended keeps
// the repeats an earlier replay wrote, and is not counted as having repeated.
func TestTallyKeepsWhatAnInterruptedReplayDidNotRerun(t *testing.T) {
	before := &results.Repeats{Times: 10, Same: 6, Classes: map[oracle.Class]int{oracle.ClassLost: 6, oracle.ClassStuck: 4}}
	orig := &results.File{Runs: []results.Run{{Scenario: "headline", Impl: "set-nx-ex", Complete: true,
		Verdict: oracle.Verdict{Class: oracle.ClassLost, Count: 59}, Repeats: before}}}
	lines, steady := tally(orig, []int{0}, nil)
	if orig.Runs[0].Repeats != before || len(lines) != 1 || !strings.Contains(lines[0], "not rerun") ||
		steady != "0 of 1 sales earned their recorded class on every rerun" {
		t.Errorf("want the earlier tally kept and the sale not counted, got %+v, %q and %q", orig.Runs[0].Repeats, lines, steady)
	}
}
