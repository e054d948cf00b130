package salestest

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// ExploreLock searches the sales d's design can be put through for what its claims do
// not admit, within budget: the explorer of `stockbench explore` draws faults with
// their modes and settings, the holders' work against the TTL, contention and
// topologies, steers towards what found something, shrinks each finding and reruns its
// smallest sale ten times for its rate. t fails once for each finding whose class the
// claims do not admit, with its signature, its rate and the smallest sale as the
// command line `stockbench run` reads (a built-in or registered design runs it as
// written). d.Faults, when set, are the only faults drawn; d.Sale is not used: the
// explorer draws the sales from fault-sale's. With -short, only the faults that need no
// server of their own are drawn. It returns what was found.
func ExploreLock(t testing.TB, d LockDesign, budget time.Duration) *explore.Report {
	t.Helper()
	if d.Impl.Name == "" {
		t.Fatal("salestest: the design needs a name (Impl.Name)")
	}
	if err := d.Impl.Validate(); err != nil {
		t.Fatalf("salestest: %v", err)
	}
	if err := d.Claims.check(faults.Locks); err != nil {
		t.Fatalf("salestest: %v", err)
	}
	r := d.Redis
	if r == nil {
		r = StartRedis(t)
	}
	base, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	space := explore.NewSpace(results.LockSale, false, d.Faults)
	space.Fine = !d.Impl.Seconds
	if testing.Short() || !r.Owned() {
		space.Faults = withoutServers(space.Faults)
	}
	run := exploreRunner(d.Impl, r)
	parallel := explore.DefaultParallel
	if !r.Owned() {
		parallel = 1
	}
	rep, err := explore.Explore(context.Background(), explore.Config{Designs: []results.Sale{base.Value(d.Impl.Name)}, Space: space,
		Budget: budget, Parallel: parallel, Run: run, Progress: func(line string) { t.Logf("salestest: %s", line) }})
	if err != nil {
		t.Fatalf("salestest: %v", err)
	}
	t.Logf("salestest: explored %s: %d draws, %d sales in %s, findings in %d regions", d.Impl.Name, rep.Draws, rep.Sales, rep.Elapsed.Round(time.Second), len(rep.Findings))
	for _, f := range rep.Findings {
		d.holdTo(t, f)
	}
	return rep
}

// exploreRunner runs the explorer's draws of impl on r, each apart on servers of its
// own when r is the harness's, refusing those impl takes no part in.
func exploreRunner(impl lockimpl.Impl, r *Redis) explore.Runner {
	var n atomic.Int64
	return func(ctx context.Context, s results.Sale, _ int) (results.Run, error) {
		sale, err := scenarios.FlashSaleOf(s)
		if err == nil {
			err = sale.Takes(impl)
		}
		if err == nil {
			err = scenarios.Refused(impl.Name, impl.Outside, sale.Faults)
		}
		if err != nil {
			return results.Run{}, fmt.Errorf("%w: %w", explore.ErrRefused, err)
		}
		sale.Prefix = fmt.Sprintf("{salestest:explore:%d}", n.Add(1))
		if !r.Owned() {
			sale.KeyLease = scenarios.DefaultKeyLease
		}
		need := rig.ForLock(impl, sale.Faults, sale.WithDefaults().Conns)
		need.Apart = r.Owned()
		ctx, cancel := context.WithTimeout(ctx, saleTimeout)
		defer cancel()
		run, err := rig.On(ctx, r.h, need, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
			return sale.Run(ctx, red, impl)
		})
		run.Sale = &s
		return run, err
	}
}

// holdTo fails t when finding f's class is one d's claims do not admit, with its
// signature, its rate and the smallest sale's command line. It judges the reruns'
// worst, or the search's draw when the budget ended before them.
func (d LockDesign) holdTo(t testing.TB, f *explore.Finding) {
	t.Helper()
	seen := 0
	for _, n := range f.Seen {
		seen = max(seen, n[0])
	}
	ex, sale, rate := &f.FirstRun, f.First, fmt.Sprintf("seen in %d draws of the search, not rerun", seen)
	if len(f.Rates) > 0 && f.Rates[0].Example != nil {
		ex, sale = f.Rates[0].Example, f.Smallest
		var rates []string
		for _, k := range f.Kinds() {
			rates = append(rates, k+" "+f.Rates[0].Of(k))
		}
		rate = "in reruns of its smallest sale: " + strings.Join(rates, ", ")
	}
	plan, _ := faults.Parse(sale.Faults)
	kind := NoFault
	if len(plan) > 0 {
		kind = plan[0].Kind
	}
	if claim := d.Claims.claim(kind); !claim.Admits(ex.Verdict.Class) {
		t.Errorf("%s %s, %s: claimed at worst %s, got %s (%s), %s\n\tstockbench %s",
			d.Impl.Name, explore.Under(f.Faults), f.Timing, claim, ex.Verdict.Cell(), ex.Verdict, rate, strings.Join(sale.Args(), " "))
	}
}

// withoutServers is kinds less the faults that need servers of their own.
func withoutServers(kinds []faults.Kind) []faults.Kind {
	var out []faults.Kind
	for _, k := range kinds {
		if spec, _ := faults.Lookup(k); spec.Needs == (faults.Needs{}) {
			out = append(out, k)
		}
	}
	return out
}
