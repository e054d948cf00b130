package runfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stockbench/stockbench/results/junit"
)

// TestLocator: an annotation of a case that broke thresholds points at the line of the
// first thresholds key it broke, named from the workflow's workspace; a key of the same
// name elsewhere in the file is not taken for it; a case that broke none points at the
// file alone.
func TestLocator(t *testing.T) {
	path := write(t, `{
  "locks": ["token", "fencing"],
  "settings": {"*": 1},
  "thresholds": {
    "*": ["oversold == 0"],
    "token/client-pause": [
      "oversold >= 0"
    ],
    "fencing": ["p99 < 50ms"]
  }
}`)
	if got := ThresholdLines([]byte("not json")); len(got) != 0 {
		t.Errorf("lines of a file that is no JSON: %v", got)
	}
	lines := ThresholdLines(mustRead(t, path))
	if want := map[string]int{"*": 5, "token/client-pause": 6, "fencing": 9}; len(lines) != len(want) {
		t.Fatalf("lines %v, want %v", lines, want)
	} else {
		for k, l := range want {
			if lines[k] != l {
				t.Errorf("line of %q: %d, want %d", k, lines[k], l)
			}
		}
	}
	t.Setenv("GITHUB_WORKSPACE", filepath.Dir(filepath.Dir(path)))
	at := Locator(path)
	want := filepath.Base(filepath.Dir(path)) + "/stockbench.json"
	for _, tc := range []struct {
		selectors []string
		line      int
	}{{[]string{"fencing", "*"}, 9}, {[]string{"gone", "token/client-pause"}, 6}, {nil, 0}} {
		if file, line := at(junit.Case{Selectors: tc.selectors}); file != want || line != tc.line {
			t.Errorf("%v: %s:%d, want %s:%d", tc.selectors, file, line, want, tc.line)
		}
	}
	t.Setenv("GITHUB_WORKSPACE", t.TempDir()) // the file outside it: named as given
	if file, _ := Locator(path)(junit.Case{}); file != filepath.ToSlash(path) {
		t.Errorf("outside the workspace: %s, want %s", file, path)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
