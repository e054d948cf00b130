package salestest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The kit, and the sale it runs, import none of the report's plotting nor its browser:
// a library's tests compile what they use.
func TestImportsLight(t *testing.T) {
	goBin, err := exec.LookPath("go") // not runtime.GOROOT: a -trimpath build has none
	if err != nil {
		t.Skip("no go command to list the imports with")
	}
	for _, pkg := range []string{".", "../../scenarios"} {
		out, err := exec.Command(goBin, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, out)
		}
		for _, heavy := range []string{"gonum.org/", "github.com/chromedp/", "results/report"} {
			if strings.Contains(string(out), heavy) {
				t.Errorf("%s imports %s", pkg, heavy)
			}
		}
	}
}
