package ghactions_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/results/ghactions"
	"github.com/stockbench/stockbench/results/junit"
)

// TestAnnotate: a failed or errored case is an ::error, a skipped one a ::notice, a
// passed one nothing; each points at the file and line its locator says (the line only
// where there is one); newlines, percents and the properties' separators are escaped as
// the runner reads them back.
func TestAnnotate(t *testing.T) {
	cases := []junit.Case{
		{ClassName: "flash-sale.none", Name: "none", Failure: &junit.Result{Message: "OVERSOLD 40, 100% over", Text: "verdict: OVERSOLD\nrerun: stockbench run"},
			Selectors: []string{"*"}},
		{ClassName: "flash-sale.lua", Name: "none"},
		{ClassName: "flash-sale.token", Name: "redis-kill:at=1s,for=2s", Error: &junit.Result{Message: "did not finish"}},
		{ClassName: "flash-sale.lua", Name: "term-holder", Skipped: &junit.Result{Message: "not exercised"}},
	}
	var b strings.Builder
	at := func(c junit.Case) (string, int) {
		if len(c.Selectors) > 0 {
			return "ci/stockbench.json", 7
		}
		return "ci/stockbench.json", 0
	}
	if err := ghactions.Annotate(&b, cases, at); err != nil {
		t.Fatal(err)
	}
	want := "::error file=ci/stockbench.json,line=7,title=stockbench flash-sale.none none::OVERSOLD 40, 100%25 over%0Averdict: OVERSOLD%0Arerun: stockbench run\n" +
		"::error file=ci/stockbench.json,title=stockbench flash-sale.token redis-kill%3Aat=1s%2Cfor=2s::did not finish\n" +
		"::notice file=ci/stockbench.json,title=stockbench flash-sale.lua term-holder::not exercised\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestStepSummary appends to the file $GITHUB_STEP_SUMMARY names, and does nothing
// outside a job.
func TestStepSummary(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "summary.md")
	if err := os.WriteFile(md, []byte("# stockbench run 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	if err := ghactions.StepSummary(md); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "step.md")
	t.Setenv("GITHUB_STEP_SUMMARY", dst)
	for range 2 {
		if err := ghactions.StepSummary(md); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(dst); string(b) != "# stockbench run 1\n\n# stockbench run 1\n\n" {
		t.Errorf("step summary: %q", b)
	}
}
