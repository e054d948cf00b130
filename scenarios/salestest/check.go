package salestest

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

func preset[S any](t *testing.T, lookup func(string) (S, error), name string) S {
	s, err := lookup(name)
	if err != nil {
		t.Fatalf("salestest: %v", err)
	}
	return s
}

// subject is one design's sales, whichever kind they are.
type subject struct {
	design  string
	valid   error // what is wrong with the design, if anything
	applies faults.Applies
	claims  Claims
	kinds   []faults.Kind
	redis   *Redis
	// need is what each of its sales needs of the servers, but for the fault plan.
	need rig.Need
	// run runs the design's sale on r, its common part set by each first.
	run func(ctx context.Context, r scenarios.Redis, each func(*scenarios.Sale)) (results.Run, error)
}

// saleTimeout bounds one sale: a design that hangs fails its subtest rather than the
// whole test binary.
const saleTimeout = 2 * time.Minute

// row is one sale's line of the table.
type row struct {
	plan  string
	claim oracle.Class
	run   *results.Run
	note  string // why there is no run, or why it failed
	worse bool
}

// check runs the subject's sales, one subtest per fault, and fails t with the table when any
// verdict is worse than claimed.
func (s subject) check(t *testing.T) {
	t.Helper()
	if s.design == "" {
		t.Fatal("salestest: the design needs a name (Impl.Name)")
	}
	if s.valid != nil {
		t.Fatalf("salestest: %s: %v", s.design, s.valid)
	}
	if err := s.claims.check(s.applies); err != nil {
		t.Fatalf("salestest: %s: %v", s.design, err)
	}
	kinds, err := s.faults()
	if err != nil {
		t.Fatalf("salestest: %s: %v", s.design, err)
	}
	r := s.redis
	if r == nil {
		r = StartRedis(t)
	}
	plans := append([]faults.Plan{nil}, make([]faults.Plan, len(kinds))...)
	for i, k := range kinds {
		plans[i+1] = faults.Plan{{Kind: k}}
	}
	rows := make([]row, len(plans))
	id := results.NewID()
	started := time.Now().UTC()
	t.Run(s.design, func(t *testing.T) {
		for i, plan := range plans {
			t.Run(plan.String(), func(t *testing.T) {
				if s.need.Nodes == 1 {
					t.Parallel()
				}
				s.sale(t, r, plan, fmt.Sprintf("{salestest:%s:%s:%d}", id, s.design, i), &rows[i])
			})
		}
	})
	s.report(t, r, id, started, rows)
}

// faults are the faults to run, checked.
func (s subject) faults() ([]faults.Kind, error) {
	if s.kinds == nil {
		var kinds []faults.Kind
		// The faults that strike one victim: under a rate no claim is judged.
		for _, k := range faults.Kinds(s.applies) {
			if spec, _ := faults.Lookup(k); !testing.Short() || spec.Needs == (faults.Needs{}) {
				kinds = append(kinds, k)
			}
		}
		return kinds, nil
	}
	for _, k := range s.kinds {
		if !slices.Contains(faults.Kinds(s.applies), k) {
			return nil, fmt.Errorf("fault %q: not a fault of %s sales (faults: %s)", k, s.applies, kindList(faults.Kinds(s.applies)))
		}
	}
	return s.kinds, nil
}

// sale runs one sale and judges it against its claim, in rw (written before a skip, which
// ends the subtest).
func (s subject) sale(t *testing.T, r *Redis, plan faults.Plan, prefix string, rw *row) {
	kind := NoFault
	if len(plan) > 0 {
		kind = plan[0].Kind
	}
	*rw = row{plan: plan.String(), claim: s.claims.claim(kind)}
	needs := plan.Needs()
	if !r.Owned() && (needs != faults.Needs{} || s.need.Nodes > 1) {
		rw.note = "skipped: needs servers the kit starts, not your own Redis"
		t.Skip(rw.note)
	}
	ctx, cancel := context.WithTimeout(context.Background(), saleTimeout)
	defer cancel()
	run, err := s.onRig(ctx, r, plan, prefix)
	switch {
	case err != nil && run.Scenario == "":
		rw.note, rw.worse = "could not start: "+err.Error(), true
	case err != nil || !run.Complete:
		rw.run, rw.worse = &run, true
		rw.note = "did not finish"
		if err != nil {
			rw.note += ": " + err.Error()
		}
	default:
		rw.run, rw.worse = &run, !rw.claim.Admits(run.Verdict.Class)
		if run.Verdict.Class == oracle.ClassNotExercised {
			rw.note = "the fault never struck: " + strings.Join(run.NotExercised, ", ")
		}
		// A design that documents what it earns (Impl.Documented) is held to that too,
		// as the command holds the built-in designs.
		if run.AsExpected != nil && !*run.AsExpected {
			rw.worse = true
			rw.note = strings.TrimPrefix(fmt.Sprintf("%s; the design documents %v", rw.note, run.Expected), "; ")
		}
	}
	if rw.worse {
		got := rw.note
		if rw.run != nil {
			got = fmt.Sprintf("%s (%s) %s", rw.run.Verdict.Cell(), rw.run.Verdict, rw.note)
		}
		t.Errorf("%s under %s: claimed at worst %s, got %s", s.design, rw.plan, rw.claim, strings.TrimSpace(got))
	}
}

func (s subject) onRig(ctx context.Context, r *Redis, plan faults.Plan, prefix string) (results.Run, error) {
	lease := time.Duration(0)
	if !r.Owned() {
		lease = scenarios.DefaultKeyLease
	}
	need := s.need
	need.Faults = plan
	return rig.On(ctx, r.h, need, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
		return s.run(ctx, red, func(sale *scenarios.Sale) {
			sale.Faults, sale.Prefix, sale.KeyLease = plan, prefix, lease
		})
	})
}

// report writes the run directory and prints the table: in the failure when a verdict
// was worse than claimed, else in the test's log.
func (s subject) report(t *testing.T, r *Redis, id string, started time.Time, rows []row) {
	t.Helper()
	f := results.NewFile("stockbench salestest", []string{"salestest", s.design}, id, r.h.Shared.Info.Record())
	f.StartedAt, f.FinishedAt, f.Complete = started, time.Now().UTC(), true
	failed := false
	for _, rw := range rows {
		failed = failed || rw.worse
		if rw.run != nil {
			f.Runs = append(f.Runs, *rw.run)
			f.Complete = f.Complete && rw.run.Complete
		}
	}
	var b strings.Builder
	writeTable(&b, rows)
	where := "no sale finished: no run directory"
	if len(f.Runs) > 0 {
		dir, err := save(t, f)
		if err != nil {
			t.Errorf("salestest: %v", err)
		}
		where = "run directory: " + dir + " (" + kept() + "stockbench report DIR draws report.html)"
	}
	if failed {
		t.Errorf("salestest: %s earned a verdict worse than claimed:\n%s%s", s.design, b.String(), where)
	} else {
		t.Logf("salestest: %s earned what it claims:\n%s%s", s.design, b.String(), where)
	}
}

// kept says where the run directory goes when the test ends.
func kept() string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return ""
	}
	return "go test -artifacts keeps it; "
}

func save(t *testing.T, f *results.File) (string, error) {
	out := results.NewOutput(t.ArtifactDir(), f.ID)
	if err := out.Progress(f); err != nil {
		return "", err
	}
	return out.Dir, nil
}

func kindList[T ~string](ks []T) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
