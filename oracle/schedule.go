package oracle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fire is one run of a scheduled drop's periodic job: the wave it dropped, the scheduler
// instance that ran it, how many units it put on sale, and when (on the ledger's clock).
type Fire struct {
	Wave      int           `json:"wave"`
	Scheduler int           `json:"scheduler"`
	Units     int64         `json:"units"`
	At        time.Duration `json:"at_ns"`
}

// String is the fire as a record stores it: "wave/scheduler/units/at_ns".
func (f Fire) String() string {
	return fmt.Sprintf("%d/%d/%d/%d", f.Wave, f.Scheduler, f.Units, int64(f.At))
}

// ParseFire reads a fire back from its String.
func ParseFire(s string) (Fire, error) {
	var n [4]int64
	parts := strings.Split(s, "/")
	for i := range n {
		var err error
		if len(parts) != len(n) {
			err = strconv.ErrSyntax
		} else {
			n[i], err = strconv.ParseInt(parts[i], 10, 64)
		}
		if err != nil {
			return Fire{}, fmt.Errorf("fire record %q is not wave/scheduler/units/at_ns", s)
		}
	}
	return Fire{Wave: int(n[0]), Scheduler: int(n[1]), Units: n[2], At: time.Duration(n[3])}, nil
}

// Schedule is what a scheduled drop's periodic job did: each wave is due once, and
// fired by whichever scheduler instance held the scheduler lock when it came due.
type Schedule struct {
	Waves int `json:"waves"`
	// Released is the units every fire put on sale, of the stock the drop planned.
	Released int64 `json:"released"`
	// FiredTwice counts the waves fired more than once (the periodic job run twice for
	// one tick); Extra the fires past each wave's first.
	FiredTwice int `json:"fired_twice"`
	Extra      int `json:"extra_fires"`
	// Missed counts the waves due before the schedulers stopped that nobody fired
	// (class STUCK: the lock kept every instance out).
	Missed int `json:"missed"`
	// Doubled are the fires of the waves fired more than once, by wave: who fired each
	// and when, which is what a person reads first.
	Doubled [][]Fire `json:"doubled,omitempty"`
	Fires   []Fire   `json:"fires"`
}

// CheckSchedule judges a scheduled drop of stock units in waves from its fires, the
// scheduler instances' holds of the lock (the lock oracles run over them as over
// buyers'), and final, the counter and lock read after the sale (nil when they could not
// be read). due is how many waves came due before the schedulers stopped.
func CheckSchedule(schedulers, waves, due int, stock int64, fires []Fire, holds []Hold, final *Final) Report {
	r := Report{Buyers: schedulers, InitialStock: stock, FinalUnknown: final == nil}
	s := &Schedule{Waves: waves, Fires: slices.Clone(fires)}
	slices.SortStableFunc(s.Fires, func(a, b Fire) int { return int(a.At - b.At) })
	byWave := make([][]Fire, waves)
	for _, f := range s.Fires {
		s.Released += f.Units
		if f.Wave >= 0 && f.Wave < waves {
			byWave[f.Wave] = append(byWave[f.Wave], f)
		}
	}
	for w, fs := range byWave {
		switch {
		case len(fs) > 1:
			s.FiredTwice++
			s.Extra += len(fs) - 1
			s.Doubled = append(s.Doubled, fs)
		case len(fs) == 0 && w < due:
			s.Missed++
		}
	}
	r.Schedule = s
	r.Bought = int(s.Released) // what the drop put on sale, against the stock it planned
	r.Oversold = max(0, s.Released-stock)
	if final != nil {
		r.FinalStock, r.StockGone = final.Stock, final.StockGone
		// The counter and the fire log are written in one transaction: a counter that
		// disagrees with the log lost writes under the scheduler.
		if !final.StockGone {
			r.LostUpdates = s.Released - final.Stock
		}
		r.LockTTL = final.LockTTL
		r.Stuck = final.LockTTL < 0 || final.LockTTL > final.Horizon
		r.RenewalsAfterRelease = final.RenewalsAfterRelease
	}
	r.Overlaps, r.LongestOverlap = holdOverlaps(holds)
	r.LockBroken, r.Violations, r.Earliest = lockOverlaps(holds)
	r.Outlived = firstOutlived(holds)
	r.ExpiredAtRelease = expiredAtRelease(holds)
	return r
}

// holdOverlaps counts the holds that began while an earlier one was still open, and the
// longest time two were open together.
func holdOverlaps(holds []Hold) (count int, longest time.Duration) {
	hs := slices.Clone(holds)
	slices.SortFunc(hs, func(a, b Hold) int { return int(a.Enter - b.Enter) })
	var open time.Duration
	for i, h := range hs {
		if i > 0 && h.Enter < open {
			count++
			longest = max(longest, min(open, h.Leave)-h.Enter)
		}
		open = max(open, h.Leave)
	}
	return count, longest
}

// findings are what the schedule's own checks found, for Report.Findings.
func (s *Schedule) findings() []string {
	var f []string
	if s == nil {
		return nil
	}
	if s.FiredTwice > 0 {
		f = append(f, fmt.Sprintf("FIRED-TWICE %d", s.FiredTwice))
	}
	if s.Missed > 0 {
		f = append(f, fmt.Sprintf("MISSED %d", s.Missed))
	}
	return f
}

// Explain says, of each wave fired more than once, who fired it and when: "wave 5 fired
// 2 times: by scheduler 1 at 1.203s, by scheduler 3 at 1.611s".
func (s *Schedule) Explain() []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, fs := range s.Doubled {
		var by []string
		for _, f := range fs {
			by = append(by, fmt.Sprintf("by scheduler %d at %s", f.Scheduler, f.At.Round(time.Millisecond)))
		}
		out = append(out, fmt.Sprintf("wave %d fired %d times: %s", fs[0].Wave+1, len(fs), strings.Join(by, ", ")))
	}
	return out
}
