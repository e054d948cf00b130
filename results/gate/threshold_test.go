package gate

import (
	"strings"
	"testing"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

func TestParseThreshold(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Threshold
	}{
		{"oversold == 0", Threshold{Metric: Oversold, Op: "==", Value: 0}},
		{"p99<50ms", Threshold{Metric: P99, Op: "<", Value: 50}},
		{"p999 <= 1.5s", Threshold{Metric: P999, Op: "<=", Value: 1500}},
		{"p50 < 20", Threshold{Metric: P50, Op: "<", Value: 20}},
		{"sales_per_sec >= 0.5 * lua", Threshold{Metric: SalesPerSec, Op: ">=", Value: 0.5, Ref: "lua"}},
		{"lost != 3", Threshold{Metric: Lost, Op: "!=", Value: 3}},
	} {
		got, err := ParseThreshold(tc.in)
		tc.want.Text = strings.Join(strings.Fields(tc.in), " ")
		if err != nil || got != tc.want {
			t.Errorf("%q: want %+v, got %+v, %v", tc.in, tc.want, got, err)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{"oversold 0", "want METRIC OP VALUE"},
		{"oversould == 0", `unknown metric "oversould"`},
		{"oversold == 50ms", `"50ms" is not a number`},
		{"p99 < fast", "neither a number of milliseconds nor a duration"},
		{"sales_per_sec >= half * lua", "a ratio is FACTOR * DESIGN"},
		{"sales_per_sec >= 0.5 *", "a ratio is FACTOR * DESIGN"},
		{"p99 < NaN", "neither"},
	} {
		if _, err := ParseThreshold(bad.in); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: want an error saying %q, got %v", bad.in, bad.want, err)
		}
	}
}

func mustThresholds(t *testing.T, m map[string][]string) Thresholds {
	th := Thresholds{}
	for sel, ts := range m {
		for _, s := range ts {
			x, err := ParseThreshold(s)
			if err != nil {
				t.Fatal(err)
			}
			th[sel] = append(th[sel], x)
		}
	}
	return th
}

// Each threshold applies to the runs its selector picks, reads the figure, and says what
// it got; one that cannot be judged is broken, never held.
func TestCheckThresholds(t *testing.T) {
	unknown := gateRun{impl: "mine", faults: "evict", sales: 100, n: 30}.run()
	unknown.Verdict.Class, unknown.Oracle.FinalUnknown = oracle.ClassUnknown, true
	f := &results.File{Runs: []results.Run{
		gateRun{impl: "lua", faults: "none", sales: 1000, p99: 4000, n: 30}.run(),
		gateRun{impl: "mine", faults: "none", sales: 400, p99: 60000, n: 30}.run(),
		gateRun{impl: "mine", faults: "client-pause", sales: 900, p99: 2000, n: 30, oversold: 2}.run(),
		gateRun{impl: "mine", faults: "slow-work", sales: 900, n: 30, incomplete: true}.run(),
		unknown,
	}}
	th := mustThresholds(t, map[string][]string{
		"*":                 {"oversold == 0"},
		"mine":              {"sales_per_sec >= 0.5 * lua", "p99 < 50ms"},
		"mine/client-pause": {"overlaps == 0", "oversold <= 1"},
		"*/evict":           {"oversold >= 0"},
	})
	var got []string
	for _, c := range Check(f, th) {
		if !c.Held {
			got = append(got, c.String())
		}
	}
	want := []string{
		"flash-sale/mine/none: sales_per_sec >= 0.5 * lua: got 400, reference 1000 (0.40x)",
		"flash-sale/mine/none: p99 < 50ms: got 60ms",
		"flash-sale/mine/client-pause: sales_per_sec >= 0.5 * lua: no complete run of lua in the same sale to compare with",
		"flash-sale/mine/client-pause: oversold <= 1: got 2",
		"flash-sale/mine/slow-work: oversold == 0: the sale did not finish",
		"flash-sale/mine/slow-work: sales_per_sec >= 0.5 * lua: the sale did not finish",
		"flash-sale/mine/slow-work: p99 < 50ms: the sale did not finish",
		"flash-sale/mine/evict: oversold >= 0: the final state could not be read",
		"flash-sale/mine/evict: sales_per_sec >= 0.5 * lua: no complete run of lua in the same sale to compare with",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken thresholds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSpecificity(t *testing.T) {
	for sel, want := range map[string]int{"*": 0, "*/*": 0, "lua": 2, "lua/none": 3, "*/none": 1, "lu?/none": 1, "lua/redis-*": 2} {
		if got := specificity(sel); got != want {
			t.Errorf("%q: want %d, got %d", sel, want, got)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, tc := range []struct {
		sel, design, plan string
		want              bool
	}{
		{"*", "lua", "none", true},
		{"lua", "lua", "client-pause", true},
		{"lua", "luax", "none", false},
		{"lua/none", "lua", "client-pause", false},
		{"*/client-pause", "token", "client-pause", true},
		{"tok*/redis-*", "token", "redis-pause", true},
	} {
		if got := Matches(tc.sel, tc.design, tc.plan); got != tc.want {
			t.Errorf("%q on %s/%s: want %v", tc.sel, tc.design, tc.plan, tc.want)
		}
	}
}

// broken_locks reads the overlaps in which both holders were inside their leases: a
// gate can allow a lease outlived and refuse a lock broken.
func TestBrokenLocksThreshold(t *testing.T) {
	r := gateRun{impl: "mine", faults: "failover", sales: 100, n: 30}.run()
	r.Oracle.Overlaps, r.Oracle.LockBroken = 5, 2
	th := mustThresholds(t, map[string][]string{"mine": {"overlaps <= 5", "broken_locks == 0"}})
	var got []string
	for _, c := range Check(&results.File{Runs: []results.Run{r}}, th) {
		if !c.Held {
			got = append(got, c.String())
		}
	}
	if want := "flash-sale/mine/failover: broken_locks == 0: got 2"; len(got) != 1 || got[0] != want {
		t.Errorf("want only %q broken, got %q", want, got)
	}
}
