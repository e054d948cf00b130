package results

import (
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
)

// TestOutpaced is when a sale that did worse than documented did so at the machine's
// pace: a second holder first came in after a lease outlived where the documentation
// admits none, or the only STUCK is stock left as the buyers' patience ran out. The
// sale is a lock sale under net-latency, documented SAFE, whose buyer 4 held a 1s lease
// 1.3s (3 of 812 holds lost to round trips) before buyer 9 came in.
func TestOutpaced(t *testing.T) {
	ms := time.Millisecond
	outlived := &oracle.Violation{Class: oracle.ClassOverlap, At: 1005 * ms,
		First:  oracle.Hold{Buyer: 4, Sent: 0, Enter: ms, Leave: 1300 * ms, Lease: time.Second},
		Second: oracle.Hold{Buyer: 9, Sent: 1004 * ms, Enter: 1005 * ms, Leave: 1010 * ms, Lease: 2004 * ms}}
	broken := *outlived
	broken.Class = oracle.ClassBroken
	sale := func(change func(*Run)) *Run {
		r := &Run{Kind: LockSale, Complete: true, Expected: []oracle.Class{oracle.ClassSafe},
			Params:    Params{Faults: "net-latency", RetryTimeout: "2s", TTL: "1s"},
			Oracle:    oracle.Report{Bought: 102, InitialStock: 100, Oversold: 2, Overlaps: 3, LockBroken: 1, Earliest: outlived, LastSale: 1900 * ms},
			LostLocks: &LostLocks{Holds: 812, Lost: 3, Other: 3}}
		if change != nil {
			change(r)
		}
		r.Verdict = r.Oracle.Outcome()
		if r.Queue != nil {
			r.Kind, r.Verdict = QueueSale, r.Queue.Outcome()
		}
		return r
	}
	unsold := func(r *Run) {
		r.Oracle = oracle.Report{Bought: 70, InitialStock: 100, GaveUp: 30, Unsold: 30, FinalStock: 30, LastSale: 1900 * ms}
		r.LostLocks = &LostLocks{Holds: 70}
	}
	for _, tc := range []struct {
		name   string
		change func(*Run)
		why    string // "" when the design's claim was put to the test
	}{
		{"oversold after a lease outlived", nil, "a second holder first came in (buyer 9, at 1.005s) after buyer 4 had held the lock 1.299s of a 1s lease (3 of 812 holds: 3 round trips)"},
		{"a broken lock first", func(r *Run) { r.Oracle.Earliest = &broken }, ""},
		// A plain DEL sent past the lease removes the next holder's lock: the third
		// holder then comes in beside the second, both inside their leases.
		{"a broken lock after a release past its lease", func(r *Run) {
			r.Oracle.Earliest = &broken
			r.Oracle.Outlived = &oracle.Hold{Buyer: 2, Enter: ms, Leave: 1004 * ms, Lease: time.Second}
		}, "the lock first broke (buyer 9 came in at 1.005s beside buyer 4) after buyer 2 had held it 1.003s of a 1s lease, its release late (3 of 812 holds: 3 round trips)"},
		{"a broken lock before a release past its lease", func(r *Run) {
			r.Oracle.Earliest = &broken
			r.Oracle.Outlived = &oracle.Hold{Buyer: 2, Enter: 100 * ms, Leave: 1200 * ms, Lease: time.Second}
		}, ""},
		{"no earliest overlap kept (a merged sale)", func(r *Run) { r.Oracle.Earliest = nil }, ""},
		{"oversold with no overlap", func(r *Run) { r.Oracle.Earliest, r.Oracle.Overlaps, r.Oracle.LockBroken = nil, 0, 0 }, ""},
		{"a fault paused holders", func(r *Run) { r.LostLocks.Paused, r.LostLocks.Other = 3, 0 }, ""},
		// A fence documents second holders and refuses their writes: an oversell is its own.
		{"documented to admit a second holder", func(r *Run) {
			r.Expected = []oracle.Class{oracle.ClassSafe, oracle.ClassOverlap, oracle.ClassStuck}
		}, ""},
		{"stock unsold as the buyers' patience ran out", unsold, "30 units unsold as sales went on until the buyers' 2s patience ran out, no lock left behind: the machine's pace, not the design's claim; rerun on a quieter machine"},
		{"stock unsold with no fault", func(r *Run) { unsold(r); r.Params.Faults = "" }, ""},
		{"stock unsold, sales stopped early", func(r *Run) { unsold(r); r.Oracle.LastSale = 900 * ms }, ""},
		{"stock unsold, a lock left alive", func(r *Run) { unsold(r); r.Oracle.Stuck = true }, ""},
		{"both, each at the machine's pace", func(r *Run) { r.Oracle.Unsold, r.Oracle.GaveUp = 5, 5 }, "after buyer 4 had held the lock 1.299s of a 1s lease (3 of 812 holds: 3 round trips); 5 units unsold"},
		{"both, the stock left by a stuck lock", func(r *Run) { r.Oracle.Unsold, r.Oracle.GaveUp, r.Oracle.Stuck = 5, 5, true }, ""},
		{"did not finish", func(r *Run) { r.Complete = false }, ""},
		{"a queue that lost orders", func(r *Run) { r.Queue = &oracle.QueueReport{Lost: 2} }, ""},
		{"a queue's duplicates, each of a worker past its visibility timeout", func(r *Run) {
			r.Queue, r.Params.Visibility = &oracle.QueueReport{DuplicatedEffects: 3, OutlivedDuplicates: 3, Fulfilled: 90, Accepted: 90, InitialStock: 100}, "300ms"
		}, "each of its 3 duplicates came as a live worker outlived its 300ms visibility timeout, and no lease broke"},
		{"a queue's duplicate under a live lease", func(r *Run) {
			r.Queue = &oracle.QueueReport{DuplicatedEffects: 3, OutlivedDuplicates: 3, LeaseOverlaps: 1, Fulfilled: 90, Accepted: 90, InitialStock: 100}
		}, ""},
		{"a queue's duplicate of a worker that died after applying", func(r *Run) {
			r.Queue = &oracle.QueueReport{DuplicatedEffects: 3, OutlivedDuplicates: 2, Fulfilled: 90, Accepted: 90, InitialStock: 100}
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sale(tc.change)
			got := r.Outpaced()
			if (tc.why == "") != (got == "") || !strings.Contains(got, tc.why) {
				t.Errorf("Outpaced() = %q, want it to hold %q", got, tc.why)
			}
			st, why := Policy{}.Stand(r)
			want := Worse
			if tc.why != "" {
				want = Outpaced
			}
			if r.Complete && st != want {
				t.Errorf("Stand = %d %q, want %d", st, why, want)
			}
		})
	}
}

// The report's surprises say why an outpaced sale is not what its design documents.
func TestSurprisesSayOutpaced(t *testing.T) {
	r := Run{Kind: LockSale, Scenario: "fault-sale", Impl: "token", Complete: true, Expected: []oracle.Class{oracle.ClassSafe},
		Params: Params{Faults: "net-latency"}, LostLocks: &LostLocks{Holds: 36, Lost: 36, Other: 36},
		Oracle: oracle.Report{Bought: 31, InitialStock: 30, Oversold: 1, Overlaps: 1, Earliest: &oracle.Violation{Class: oracle.ClassOverlap,
			At: 14 * time.Millisecond, First: oracle.Hold{Buyer: 31, Leave: 24 * time.Millisecond, Lease: 3 * time.Millisecond}, Second: oracle.Hold{Buyer: 46}}}}
	r.Judge(r.Oracle.Outcome(), nil, r.Expected)
	got := Surprises([]Run{r})
	want := "fault-sale with token under net-latency: OVERSOLD 1, documented SAFE; outpaced, not put to the test: a second holder first came in (buyer 46, at 14ms) after buyer 31 had held the lock 24ms of a 3ms lease (36 of 36 holds: 36 round trips)"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("Surprises = %q, want one line beginning %q", got, want)
	}
}
