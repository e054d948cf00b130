package salestest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios/salestest"
)

// recorder is a test whose failures are kept, to be read, rather than failing it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

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
