package analysis

import (
	"fmt"
	"slices"
	"time"

	"github.com/stockbench/stockbench/results"
)

// word is the table of what the lock's library told its holders, fault by fault, when
// each asked it right before writing whether it still held the lock: how long it went
// on saying "held" while another holder had the lock, and how long a holder waited to
// be told no once its lock was gone, each as p50 / p99 / max over the draws that had
// one (each draw's longest).
func (an Analysis) word(b *md) {
	r, p := an.Record, b.p
	if r.Kind != results.LockSale {
		return
	}
	p("")
	p("## The library's word against Redis")
	p("")
	asked := slices.ContainsFunc(r.Cells, func(c Cell) bool {
		return slices.ContainsFunc(c.Draws, func(d results.Draw) bool { return d.Word != nil })
	})
	if !asked {
		p("No holder in these draws asked the library whether it still held the lock before writing: the library offers no such API (see above), or the record was made before holders asked (2026-12-02); `make analyses` measures it anew.")
		return
	}
	p("Each holder asked the library right before its write whether it still held the lock. **Told held while taken**: from the next holder's acquire to the library's \"held\", a write on the library's wrong word (LOCK-BROKEN). **Time to be told no**: from when the lock was gone (its lease's end, or the next holder's acquire where that came first; a fault that deleted the key earlier makes the true wait longer) to the library's \"no\", which a holder hears only when it asks, right before its write: after a pause or slow work, mostly how long the fault kept it from asking. Each draw's longest, over the draws that had one.")
	p("")
	p("| Fault | holders asked | told held while taken: draws, p50 / p99 / max | time to be told no: draws, p50 / p99 / max |\n|---|---|---|---|")
	for _, cell := range r.Cells {
		var asked, n int
		var stale, toBeTold []time.Duration
		for _, d := range cell.Draws {
			if d.Word == nil {
				continue
			}
			n++
			asked += d.Word.Asked
			if d.Word.ToldHeld > 0 {
				stale = append(stale, d.Word.Stale)
			}
			if d.Word.ToldNo > 0 {
				toBeTold = append(toBeTold, d.Word.ToBeTold)
			}
		}
		p("| %s | %d in %d of %d draws | %s | %s |", cell.Fault, asked, n, len(cell.Draws), spread(stale, n), spread(toBeTold, n))
	}
}

// spread is "K draws of N: p50 / p99 / max" of ds (nearest rank), or "none".
func spread(ds []time.Duration, n int) string {
	if len(ds) == 0 {
		return "none"
	}
	slices.Sort(ds)
	at := func(q float64) time.Duration { return short(ds[int(q*float64(len(ds)-1)+0.5)]) }
	return fmt.Sprintf("%s of %d: %s / %s / %s", plural(len(ds), "draw"), n, at(0.5), at(0.99), short(ds[len(ds)-1]))
}

// short rounds d to what a table needs: a tenth of a millisecond, or a microsecond
// below a millisecond.
func short(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
