//go:build long

package salestest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios/salestest"
)

// ExploreLock, given set-nx-ex claimed SAFE everywhere and slow work the one fault to
// draw, finds what the claim does not admit without being told a work time or a
// contention, and fails with the smallest sale's command. A holder working past the TTL
// overlaps the next one in every sale where the slow holder's turn comes, and the
// drawn sales that give it one are most of them: 40 s of draws meet one as surely as the
// preset's fault-sale does in every make bench.
func TestExploreLockFindsWhatClaimsDoNotAdmit(t *testing.T) {
	setnx, err := lockimpl.Lookup("set-nx-ex")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{TB: t}
	rep := salestest.ExploreLock(rec, salestest.LockDesign{Impl: setnx, Faults: []faults.Kind{faults.SlowWork}}, 40*time.Second)
	if len(rec.errs) == 0 || rep.Draws == 0 {
		t.Fatalf("no failure in %d draws; findings: %d", rep.Draws, len(rep.Findings))
	}
	for _, e := range rec.errs {
		if !strings.Contains(e, "claimed at worst SAFE") || !strings.Contains(e, "stockbench run --scenario fault-sale --lock set-nx-ex --fault ") {
			t.Errorf("a failure without its claim or its smallest command: %s", e)
		}
	}
	t.Logf("the kit's failures, as a test of the user's would print them:\n%s", strings.Join(rec.errs, "\n"))
}

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
		cmd := exec.Command("go", "test", "-race", "-count=1", "-mod=mod", "-run", run, ".")
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
