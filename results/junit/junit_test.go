package junit_test

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/junit"
)

func run(impl, plan string, v oracle.Verdict, expected ...oracle.Class) results.Run {
	ok := len(expected) == 0
	for _, c := range expected {
		ok = ok || c == v.Class
	}
	return results.Run{Scenario: "flash-sale", Impl: impl, Params: results.Params{Faults: plan}, Complete: true,
		Duration: 1500 * time.Millisecond, Verdict: v, Expected: expected, AsExpected: &ok, Rerun: []string{"run", "--lock", impl}}
}

// TestSales holds each way a sale ends to its case: the class name, the name, the kind
// of result and what its text must carry for a person to act on it.
func TestSales(t *testing.T) {
	oversold := run("none", "none", oracle.Verdict{Class: oracle.ClassOversold, Count: 3, Findings: []string{"OVERSOLD 3"}}, oracle.ClassSafe)
	oversold.Oracle.Violations = []oracle.Violation{{Class: oracle.ClassBroken, At: 7 * time.Millisecond,
		First: oracle.Hold{Buyer: 1, Enter: 5 * time.Millisecond, Lease: 2 * time.Second}, Second: oracle.Hold{Buyer: 2, Enter: 7 * time.Millisecond}, For: time.Millisecond}}
	// outpaced oversold after a holder outlived its lease: not put to the test.
	outpaced := run("token", "net-latency", oracle.Verdict{Class: oracle.ClassOversold, Count: 1}, oracle.ClassSafe)
	outpaced.Kind, outpaced.Oracle = results.LockSale, oracle.Report{Bought: 31, InitialStock: 30, Oversold: 1, Overlaps: 1,
		Earliest: &oracle.Violation{Class: oracle.ClassOverlap, First: oracle.Hold{Buyer: 1, Leave: 1200 * time.Millisecond, Lease: time.Second}}}
	cut := run("token", "redis-kill", oracle.Verdict{Class: oracle.ClassUnknown})
	cut.Complete, cut.Error = false, "redis: connection refused"
	f := &results.File{Runs: []results.Run{
		run("lua", "none", oracle.Verdict{Class: oracle.ClassSafe}, oracle.ClassSafe),
		oversold,
		cut,
		run("lua", "term-holder", oracle.Verdict{Class: oracle.ClassNotExercised}, oracle.ClassNotExercised),
		run("token", "none", oracle.Verdict{Class: oracle.ClassSafe}, oracle.ClassSafe),
		run("set-nx-ex", "none", oracle.Verdict{Class: oracle.ClassSafe}, oracle.ClassSafe),
		outpaced,
	}}
	f.Runs[3].NotExercised = []string{"term-holder"}
	f.Checks = []results.Check{
		{Run: "flash-sale/token/none", Threshold: "p99 <= 5ms", Held: false, Why: "got 9ms"},
		{Run: "baseline 1", Threshold: "flash-sale/set-nx-ex/none: p50 +40%, beyond the 20% effect"},
		{Run: "flash-sale/lua/none", Threshold: "sales/s >= 100", Held: true},
		{Run: "on its own", Threshold: "as the record says", Held: false, Why: "NOT reproduced"},
	}
	rerun := func(r *results.Run) string { return "stockbench " + strings.Join(r.Rerun, " ") }
	cases := junit.Sales(f, results.Policy{}.Stand, rerun)
	tests := []struct {
		class, name, kind string
		text              []string
	}{
		{"flash-sale.lua", "none", "passed", []string{"verdict: SAFE", "rerun: stockbench run --lock lua"}},
		{"flash-sale.none", "none", "failure", []string{"verdict: OVERSOLD 3", "finding: OVERSOLD 3", "documented: SAFE",
			"first violation: LOCK-BROKEN at 7ms: buyer 1 held since 5ms (lease to 2s), buyer 2 came in at 7ms", "rerun: stockbench run --lock none"}},
		{"flash-sale.token", "redis-kill", "error", []string{"error: redis: connection refused", "rerun: stockbench run --lock token"}},
		{"flash-sale.lua", "term-holder", "skipped", nil},
		{"flash-sale.token", "none", "failure", []string{"broken: flash-sale/token/none: p99 <= 5ms: got 9ms"}},
		{"flash-sale.set-nx-ex", "none", "failure", []string{"broken: baseline 1: flash-sale/set-nx-ex/none: p50 +40%"}},
		{"flash-sale.token", "net-latency", "skipped", []string{"outpaced, not put to the test: OVERSOLD 1, worse than the SAFE it documents, but a second holder first came in"}},
		{"stockbench.check", "on its own", "failure", []string{"as the record says: NOT reproduced"}},
	}
	if len(cases) != len(tests) {
		t.Fatalf("want %d cases, got %d: %+v", len(tests), len(cases), cases)
	}
	for i, tt := range tests {
		c := cases[i]
		kind, text := "passed", ""
		switch {
		case c.Failure != nil:
			kind, text = "failure", c.Failure.Text
		case c.Error != nil:
			kind, text = "error", c.Error.Text
		case c.Skipped != nil:
			kind, text = "skipped", c.Skipped.Message
		case c.SystemOut != nil:
			text = c.SystemOut.Text
		}
		if c.ClassName != tt.class || c.Name != tt.name || kind != tt.kind {
			t.Errorf("case %d: got %s %s %s, want %s %s %s", i, c.ClassName, c.Name, kind, tt.class, tt.name, tt.kind)
		}
		for _, want := range tt.text {
			if !strings.Contains(text, want) {
				t.Errorf("case %d (%s %s): want %q in its text:\n%s", i, c.ClassName, c.Name, want, text)
			}
		}
	}
}

// TestAppendFile: check's exploration adds a suite to its sales' file, and the counts
// of the whole document add up; a file written anew holds one suite.
func TestAppendFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	fail := junit.Case{ClassName: "a", Name: "x", Time: junit.Seconds(time.Second), Failure: &junit.Result{Message: "m", Text: "a ]]> b"}}
	pass := junit.Case{ClassName: "a", Name: "y", Time: junit.Seconds(2 * time.Second)}
	if err := junit.WriteFile(path, junit.Suite{Name: "sales"}, []junit.Case{fail, pass}); err != nil {
		t.Fatal(err)
	}
	skip := junit.Case{ClassName: "b", Name: "z", Skipped: &junit.Result{Message: "not exercised"}}
	if err := junit.AppendFile(path, junit.Suite{Name: "explore"}, []junit.Case{skip}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests    int     `xml:"tests,attr"`
		Failures int     `xml:"failures,attr"`
		Skipped  int     `xml:"skipped,attr"`
		Time     float64 `xml:"time,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Failure *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	if doc.Tests != 3 || doc.Failures != 1 || doc.Skipped != 1 || doc.Time != 3 || len(doc.Suites) != 2 ||
		doc.Suites[0].Name != "sales" || doc.Suites[1].Name != "explore" || doc.Suites[0].Tests != 2 {
		t.Errorf("got %+v:\n%s", doc, b)
	}
	if got := doc.Suites[0].Cases[0].Failure.Text; got != "a ]]> b" {
		t.Errorf("a failure's text read back as %q", got)
	}
	if err := junit.WriteFile(path, junit.Suite{Name: "anew"}, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Count(string(b), "<testsuite ") != 1 {
		t.Errorf("a file written anew kept the old suites:\n%s", b)
	}
}

func TestWritable(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		path string
		ok   bool
	}{{filepath.Join(dir, "j.xml"), true}, {dir, false}, {filepath.Join(dir, "no", "j.xml"), false}} {
		if err := junit.Writable(tt.path); (err == nil) != tt.ok {
			t.Errorf("Writable(%s): %v, want ok %v", tt.path, err, tt.ok)
		}
	}
}
