package salestest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFromAnotherModule is a lock library's own repository using the kit, as its author
// would: a module of its own in a temporary directory (testdata/mylock, with a replace
// directive to this checkout), with a lock that keeps its claims and one that does not.
// go test passes the first and fails the second with the verdict table.
func TestFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs another module's tests")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range []string{"mylock.go", "mylock_test.go"} {
		copyFile(t, filepath.Join("testdata", "mylock", f), filepath.Join(dir, f))
	}
	copyFile(t, filepath.Join(root, "go.sum"), filepath.Join(dir, "go.sum"))
	mod := "module example.com/mylock\n\ngo 1.26\n\nrequire github.com/stockbench/stockbench v0.0.0\n\n" +
		"replace github.com/stockbench/stockbench => " + root + "\n"
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644); err != nil {
		t.Fatal(err)
	}
	goTest := func(run string) (string, error) {
		// -race, as a lock's author runs the kit: it also shares the race build make test
		// compiled, where a plain build compiled the kit's dependencies once more.
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "test", "-race", "-count=1", "-mod=mod", "-run", run, ".")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := goTest("^TestLock$"); err != nil {
		t.Fatalf("the lock that keeps its claims failed: %v\n%s", err, out)
	}
	out, err := goTest("^TestSecondsLock$")
	if _, failed := err.(*exec.ExitError); !failed {
		t.Fatalf("the lock with the units bug: want go test to fail, got %v\n%s", err, out)
	}
	for _, want := range []string{
		"mylock-seconds under none: claimed at worst SAFE, got OVERSOLD",
		"FAULTS", "CLAIM", "VERDICT", "<- worse than claimed", "run directory: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the failure does not say %q:\n%s", want, out)
		}
	}
	out, err = goTest("^TestDocumentedLock$")
	if _, failed := err.(*exec.ExitError); !failed {
		t.Fatalf("the lock documented as it does not earn: want go test to fail, got %v\n%s", err, out)
	}
	if want := "mylock-documented under none: claimed at worst OVERSOLD, got SAFE (SAFE) the design documents [OVERSOLD]"; !strings.Contains(out, want) {
		t.Errorf("the failure does not say %q:\n%s", want, out)
	}
}

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
	for _, pkg := range []string{".", "../../scenarios"} {
		out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", pkg).CombinedOutput()
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
