package scenarios_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/redistest"
	"github.com/stockbench/stockbench/internal/rig"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// TestDocumentedVerdicts runs every design under every fault it documents a verdict for,
// on the preset make bench runs, and asserts the verdict: the negative control oversells
// everywhere, fencing and the lock-free designs never oversell, the TTL locks break
// exactly where they say they do.
func TestDocumentedVerdicts(t *testing.T) {
	shared := redistest.Shared(t)
	pool, err := rig.NewPool(context.Background(), shared, redistest.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(context.Background()) })
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, impl := range lockimpl.All() {
		names := make([]string, 0, len(impl.Expect))
		for f := range impl.Expect {
			names = append(names, f)
		}
		sort.Slice(names, func(i, j int) bool { return faultOrder(names[i]) < faultOrder(names[j]) })
		for _, fault := range names {
			want := impl.Expect[fault]
			t.Run(impl.Name+"/"+fault, func(t *testing.T) {
				if impl.LockNodes() == 1 {
					// GOMAXPROCS at a time: most of a sale is waiting. Redlock runs alone:
					// with five servers' worth of commands it nears livelock under load.
					t.Parallel()
				}
				plan, err := faults.Parse(fault)
				if err != nil {
					t.Fatal(err)
				}
				s := sale
				s.Faults = plan
				s.Prefix = fmt.Sprintf("{test:%s:%s}", impl.Name, fault)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				r, err := rig.Start(ctx, shared, pool, impl.LockNodes(), plan)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close(context.Background())
				run, err := s.Run(ctx, r.Redis(s.WithDefaults().Conns), impl)
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if !slices.Contains(want, run.Class) {
					t.Errorf("want %v, got %s (%s); events %+v", want, run.Cell, run.Verdict, run.Events)
				}
			})
		}
	}
}

func faultOrder(name string) int {
	if name == "none" {
		return -1
	}
	return slices.Index(faults.Kinds, faults.Kind(name))
}

// TestDocumentedQueueVerdicts runs every queue design under every fault it documents a
// verdict for, with each fulfil, on the preset make bench runs: list and zpopmin lose
// exactly the crashed workers' tasks, reliable-list and stream lose none and duplicate
// only what an idempotent fulfil absorbs, no design oversells.
func TestDocumentedQueueVerdicts(t *testing.T) {
	shared := redistest.Shared(t)
	pool, err := rig.NewPool(context.Background(), shared, redistest.Config())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(context.Background()) })
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, impl := range queueimpl.All() {
		for fault, want := range impl.Expect {
			for i, fulfil := range []scenarios.Fulfil{scenarios.Naive, scenarios.Idempotent} {
				t.Run(fmt.Sprintf("%s/%s/%s", impl.Name, fault, fulfil), func(t *testing.T) {
					t.Parallel()
					plan, err := faults.Parse(fault)
					if err != nil {
						t.Fatal(err)
					}
					s := sale
					s.Faults, s.Fulfil = plan, fulfil
					s.Prefix = fmt.Sprintf("{test:%s:%s:%s}", impl.Name, fault, fulfil)
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					r, err := rig.Start(ctx, shared, pool, 1, plan)
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close(context.Background())
					run, err := s.Run(ctx, r.Redis(s.WithDefaults().Conns), impl)
					if err != nil {
						t.Fatalf("run: %v", err)
					}
					q := run.Queue
					if !slices.Contains(want[i], run.Class) || q.Oversold > 0 {
						t.Errorf("want %v, got %s (%s): %+v", want[i], run.Cell, run.Verdict, q)
					}
					if plan.Has(faults.WorkerCrash) && strings.HasPrefix(impl.Guarantee, "at most once") && q.Lost != q.Crashed {
						t.Errorf("want exactly the %d crashed workers' tasks lost, got %d", q.Crashed, q.Lost)
					}
				})
			}
		}
	}
}
