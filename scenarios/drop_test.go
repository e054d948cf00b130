package scenarios_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// TestDocumentedDropVerdicts runs every built-in lock as the scheduler lock of the
// drop-sale preset, under the faults its drop verdicts name that quick picks, and
// asserts them; TestEveryDocumentedDropVerdict asserts the rest: a failover fires a wave
// twice through the TTL locks (the periodic job run twice, OVERSOLD), never through
// fencing, whose store refuses the stale fire.
func TestDocumentedDropVerdicts(t *testing.T) {
	t.Parallel()
	for _, impl := range lockimpl.All() {
		if impl.NewLocker != nil && !impl.DropDocumented.Documented() {
			t.Errorf("%s documents no drop verdicts", impl.Name)
		}
	}
	documentedDropVerdicts(t, quick)
}

func documentedDropVerdicts(t *testing.T, pick selection) {
	earnsDocumented(t, "drop-sale", pick, func(impl lockimpl.Impl) faults.Verdicts { return impl.DropDocumented },
		func(t *testing.T, impl lockimpl.Impl, _ faults.Plan, run results.Run) {
			if run.AsExpected == nil || !*run.AsExpected {
				t.Errorf("the record says %s is not what %s documents as a drop (%v)", run.Verdict.Cell(), impl.Name, run.Expected)
			}
			firedTwice(t, run)
		})
}

// firedTwice asserts that an oversold drop says which wave fired twice and who fired it,
// and that every other wave fired once.
func firedTwice(t *testing.T, run results.Run) {
	t.Helper()
	s := run.Oracle.Schedule
	if s == nil {
		t.Fatal("a drop's record has no schedule")
	}
	if run.Verdict.Class != oracle.ClassOversold {
		if s.FiredTwice > 0 {
			t.Errorf("%d waves fired twice, verdict %s", s.FiredTwice, run.Verdict)
		}
		return
	}
	explained := s.Explain()
	if s.FiredTwice == 0 || len(explained) != s.FiredTwice || !strings.Contains(run.Verdict.String(), "FIRED-TWICE") {
		t.Fatalf("OVERSOLD with no wave said to fire twice: %s, %+v", run.Verdict, s)
	}
	if !strings.Contains(explained[0], "by scheduler") {
		t.Errorf("want who fired the wave, got %q", explained[0])
	}
	if got, want := run.Oracle.Oversold, s.Released-run.Params.Stock; got != want || len(s.Fires) != s.Waves+s.Extra {
		t.Errorf("oversold %d, want the extra waves' %d; %d fires of %d waves, %d extra", got, want, len(s.Fires), s.Waves, s.Extra)
	}
}

// TestDropDownToOneUnit: one scheduler, one wave of one unit, and a wave of no units
// (more waves than stock): each ends with a verdict and fires every wave once.
func TestDropDownToOneUnit(t *testing.T) {
	t.Parallel() // its own keys; it mostly waits
	h := rigtest.Harness(t)
	impl, err := lockimpl.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		buyers, waves int
		stock         int64
	}{{1, 1, 1}, {2, 3, 1}} {
		t.Run(fmt.Sprintf("%d-schedulers-%d-waves-%d-units", c.buyers, c.waves, c.stock), func(t *testing.T) {
			s, err := scenarios.Lookup("drop-sale")
			if err != nil {
				t.Fatal(err)
			}
			s.Buyers, s.Stock, s.Drop.Waves = c.buyers, c.stock, c.waves
			s.Prefix = fmt.Sprintf("{drop-small:%d:%d}", c.buyers, c.waves)
			run := rigtest.On(t, h, rig.ForLock(impl, nil, s.WithDefaults().Conns),
				func(ctx context.Context, r scenarios.Redis) (results.Run, error) { return s.Run(ctx, r, impl) })
			sc := run.Oracle.Schedule
			if run.Verdict.Class != oracle.ClassSafe || sc == nil || len(sc.Fires) != c.waves || sc.Released != c.stock {
				t.Fatalf("want SAFE with %d fires releasing %d, got %s: %+v", c.waves, c.stock, run.Verdict, sc)
			}
		})
	}
}
