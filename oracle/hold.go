package oracle

import (
	"cmp"
	"slices"
	"time"
)

// Hold is one lock hold as its holder saw it, on the ledger's clock: what the
// lease-aware overlap check reads, and what a violation's timeline draws.
type Hold struct {
	Buyer int `json:"buyer"`
	// Sent is when the acquire that won the lock was sent; Enter when its reply came.
	Sent  time.Duration `json:"sent_ns"`
	Enter time.Duration `json:"enter_ns"`
	// Read and Wrote are when the holder's stock read and stock write were answered;
	// zero when it did not get that far (an atomic critical section only writes).
	Read  time.Duration `json:"read_ns,omitempty"`
	Wrote time.Duration `json:"wrote_ns,omitempty"`
	// Leave is when the release began, or when a fault killed the holder.
	Leave time.Duration `json:"leave_ns"`
	// Released is when the release was answered; zero when there was none (the holder
	// died) or it failed.
	Released time.Duration `json:"released_ns,omitempty"`
	// Lease is when the lock's promise ran out: Sent plus the TTL, or the send of the
	// last renewal Redis confirmed plus the TTL. Redis counts a TTL from when the command
	// reached it, after the send, so the lock was held at least this long.
	Lease time.Duration `json:"lease_ns"`
	// Expired is set when the release found the lock no longer the holder's.
	Expired bool `json:"expired,omitempty"`
	// Died is set when a fault killed the holder holding the lock.
	Died bool `json:"died,omitempty"`
	// Asked is when the holder asked its lock library "do I still hold it?", right
	// before the write (lockimpl.Teller), and Told when the library answered; zero when
	// it was not asked. ToldNo is set when the answer was no (or an error): the holder
	// then did not write.
	Asked  time.Duration `json:"asked_ns,omitempty"`
	Told   time.Duration `json:"told_ns,omitempty"`
	ToldNo bool          `json:"told_no,omitempty"`
}

// toldHeldAfter reports whether h's library told it "you hold it" on a question asked
// once next, the holder that took the lock after h, had it: the library's word was
// wrong, and h wrote on it.
func toldHeldAfter(h, next Hold) bool {
	return h.Asked > 0 && !h.ToldNo && next.Enter <= h.Asked
}

// Margin is how long before its lease's end a hold stops being surely inside it: a
// millisecond for the resolution of Redis's clock, and 0.2% of the lease for the rate of
// the server's clock against the harness's (NTP slews a clock by at most 0.05%).
func (h Hold) Margin() time.Duration { return leaseMargin(h.Lease - h.Sent) }

// leaseMargin is the margin of a lease of length d, for holds and deliveries alike.
func leaseMargin(d time.Duration) time.Duration { return time.Millisecond + d/500 }

// Sure is when the hold stops being surely inside its lease: the lease's end less the
// margin, or the release, whichever comes first. A hold whose acquire answered after
// that was never surely inside it (Sure is then at most Enter).
func (h Hold) Sure() time.Duration { return min(h.Leave, h.Lease-h.Margin()) }

// inLease reports whether h was surely inside its lease at t.
func (h Hold) inLease(t time.Duration) bool { return h.Enter <= t && t < h.Sure() }

// Violation is two holds of the lock at once: a broken lock when both were surely
// inside their leases when the second began, else an overlap where the first holder had
// outlived its lease.
type Violation struct {
	Class  Class `json:"class"`
	First  Hold  `json:"first"`
	Second Hold  `json:"second"`
	// At is when the two began to overlap (the second's Enter); For how long they did.
	At  time.Duration `json:"at_ns"`
	For time.Duration `json:"for_ns"`
	// ToldAfter, for a lock broken on its library's word (toldHeldAfter), is how long
	// after the second got in the first's library told it that it still held the lock.
	ToldAfter time.Duration `json:"told_after_ns,omitempty"`
}

// maxViolations is how many violations a report keeps for its timelines, the worst first.
const maxViolations = 3

// lockOverlaps sweeps the holds in order of entry: a hold that enters while an earlier
// one is open overlaps it; when the earlier one was also surely inside its lease, and so
// was the new one, the lock broke its promise. A holder that asked its library "do I
// still hold it?" is judged by the answer: told yes once the next holder had the lock,
// it wrote on the library's wrong word, and the lock broke whatever the leases say;
// told no, it did not write, and the two only overlapped in time. It returns the broken
// count, the worst few violations (broken ones first, then the longest) and the first,
// where the trouble began: what followed an outlived lease (a late release deleting the
// next holder's lock) may be a broken lock, but not the cause.
func lockOverlaps(holds []Hold) (broken int, worst []Violation, first *Violation) {
	hs := slices.Clone(holds)
	slices.SortFunc(hs, func(a, b Hold) int { return cmp.Compare(a.Enter, b.Enter) })
	open, sure := -1, -1 // the earlier holds that leave last, and that stay surely inside last
	for i, h := range hs {
		var v *Violation
		switch {
		case i > 0 && toldHeldAfter(hs[i-1], h):
			broken++
			v = &Violation{Class: ClassBroken, First: hs[i-1], Second: h, ToldAfter: hs[i-1].Told - h.Enter}
		case sure >= 0 && !hs[sure].ToldNo && hs[sure].inLease(h.Enter) && h.inLease(h.Enter):
			broken++
			v = &Violation{Class: ClassBroken, First: hs[sure], Second: h}
		case open >= 0 && h.Enter < hs[open].Leave:
			v = &Violation{Class: ClassOverlap, First: hs[open], Second: h}
		}
		if v != nil {
			v.At, v.For = h.Enter, min(v.First.Leave, h.Leave)-h.Enter
			worst = keepWorst(worst, *v)
			if first == nil {
				first = v
			}
		}
		if open < 0 || h.Leave > hs[open].Leave {
			open = i
		}
		if sure < 0 || h.Sure() > hs[sure].Sure() {
			sure = i
		}
	}
	return broken, worst, first
}

// KindToldHeld names, among a sale's findings, the holders its lock library told "you
// hold it" once the next holder had the lock (Word.ToldHeld): the library's own wrong
// word, which an analysis judges against what the library says its answer means. It
// is a kind of finding, not a class: each such holder wrote on that word, so its sale
// is at least LOCK-BROKEN.
const KindToldHeld = "TOLD-HELD"

// Word is what a sale's lock library told its holders when asked "do I still hold
// it?" right before their writes, against when their locks were gone.
type Word struct {
	// Asked counts the holds whose library was asked; ToldNo those told no (or an
	// error), which did not write.
	Asked  int `json:"asked,omitempty"`
	ToldNo int `json:"told_no,omitempty"`
	// ToldHeld counts the holders told "you hold it" once the next holder had taken
	// the lock (toldHeldAfter): each wrote on the library's wrong word, a LOCK-BROKEN
	// charged to the library. FirstToldHeld is the earliest of them.
	ToldHeld      int        `json:"told_held_while_taken,omitempty"`
	FirstToldHeld *Violation `json:"first_told_held,omitempty"`
	// Stale is the longest window in which the library told a holder "you hold it"
	// while another held the lock: from the next holder's acquire to the answer.
	Stale time.Duration `json:"stale_told_held_ns,omitempty"`
	// ToBeTold is the longest a holder waited to be told no once its lock was gone,
	// from when the harness knows it was (the lease's end, or the next holder's
	// acquire where that came first) to the answer; an answer before then counts 0.
	// A fault that deleted the key earlier makes the wait longer than this.
	ToBeTold time.Duration `json:"time_to_be_told_ns,omitempty"`
}

// libraryWord judges the holders' questions to their library. A sale whose holders
// never asked costs nothing: its holds, up to a million, are not sorted again.
func libraryWord(holds []Hold) Word {
	var w Word
	if !slices.ContainsFunc(holds, func(h Hold) bool { return h.Asked > 0 }) {
		return w
	}
	hs := slices.Clone(holds)
	slices.SortFunc(hs, func(a, b Hold) int { return cmp.Compare(a.Enter, b.Enter) })
	for i, h := range hs {
		if h.Asked == 0 {
			continue
		}
		w.Asked++
		gone := h.Lease
		if i+1 < len(hs) {
			next := hs[i+1]
			gone = min(gone, next.Enter)
			if toldHeldAfter(h, next) {
				stale := h.Told - next.Enter
				w.ToldHeld++
				w.Stale = max(w.Stale, stale)
				if w.FirstToldHeld == nil || h.Told < w.FirstToldHeld.First.Told {
					w.FirstToldHeld = &Violation{Class: ClassBroken, First: h, Second: next, At: next.Enter,
						For: min(h.Leave, next.Leave) - next.Enter, ToldAfter: stale}
				}
			}
		}
		if h.ToldNo {
			w.ToldNo++
			w.ToBeTold = max(w.ToBeTold, h.Told-gone)
		}
	}
	return w
}

// keepWorst adds v to the few kept, broken locks before overlaps and longer before
// shorter, earlier before later.
func keepWorst(kept []Violation, v Violation) []Violation {
	worse := func(a, b Violation) int {
		return cmp.Or(cmp.Compare(b2i(b.Class == ClassBroken), b2i(a.Class == ClassBroken)),
			cmp.Compare(b.For, a.For), cmp.Compare(a.At, b.At))
	}
	kept = append(kept, v)
	slices.SortStableFunc(kept, worse)
	return kept[:min(len(kept), maxViolations)]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Outlived reports whether the hold outlived its lease, its holder alive: its release
// began after the lease had surely run out (Redis began the TTL by the acquire's answer
// at the latest, then the margin), or was answered after that, so that it may have
// reached Redis when the lock was another's.
func (h Hold) Outlived() bool {
	end := h.Lease + (h.Enter - h.Sent) + h.Margin()
	return !h.Died && (h.Leave > end || h.Released > end)
}

// firstOutlived is the hold whose release began first among those that outlived their
// lease; nil when none did.
func firstOutlived(holds []Hold) *Hold {
	var first *Hold
	for i := range holds {
		if h := holds[i]; h.Outlived() && (first == nil || h.Leave < first.Leave) {
			first = &holds[i]
		}
	}
	if first == nil {
		return nil
	}
	h := *first
	return &h
}

// expiredAtRelease counts the releases that found their lock already gone.
func expiredAtRelease(holds []Hold) (n int) {
	for _, h := range holds {
		if h.Expired {
			n++
		}
	}
	return n
}

// zombie reports whether a lock left alive at the end has no holder to answer for it:
// the last hold released it cleanly, and no holder died with it.
func zombie(holds []Hold, lockTTL time.Duration) bool {
	if lockTTL <= 0 || len(holds) == 0 {
		return false
	}
	last := holds[0]
	for _, h := range holds {
		if h.Died {
			return false
		}
		if h.Enter > last.Enter {
			last = h
		}
	}
	return last.Released > 0 && !last.Expired
}
