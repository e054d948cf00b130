package oracle

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// hold is a hold of a 100ms lease sent at sent, answered 1ms later, left at leave (ms).
func hold(buyer, sent, leave int) Hold {
	d := func(n int) time.Duration { return time.Duration(n) * ms }
	return Hold{Buyer: buyer, Sent: d(sent), Enter: d(sent + 1), Leave: d(leave), Released: d(leave + 1), Lease: d(sent + 100)}
}

func TestLockOverlaps(t *testing.T) {
	renewed := hold(1, 0, 250)
	renewed.Lease = 260 * ms // a renewal sent at 160ms
	// asked: h asked its library at askedMs and was told no, or yes, 1ms later.
	asked := func(h Hold, askedMs int, no bool) Hold {
		h.Asked, h.Told, h.ToldNo = time.Duration(askedMs)*ms, time.Duration(askedMs+1)*ms, no
		return h
	}
	tests := []struct {
		name         string
		holds        []Hold
		broken       int
		worst        Class
		first, other int   // the buyers of the worst violation
		began        Class // the earliest violation's
	}{
		{"one after the other", []Hold{hold(1, 0, 50), hold(2, 50, 90)}, 0, "", 0, 0, ""},
		// The second came at 31ms, well inside the first's lease: the lock broke.
		{"a second holder inside the lease", []Hold{hold(1, 0, 80), hold(2, 30, 60)}, 1, ClassBroken, 1, 2, ClassBroken},
		// The first held on past its 100ms lease: the application outlived it.
		{"a holder past its lease", []Hold{hold(1, 0, 150), hold(2, 120, 160)}, 0, ClassOverlap, 1, 2, ClassOverlap},
		// Inside the margin before the lease's end (1ms + 0.2% of 100ms): not surely inside.
		{"inside the margin", []Hold{hold(1, 0, 150), hold(2, 98, 160)}, 0, ClassOverlap, 1, 2, ClassOverlap},
		{"just before the margin", []Hold{hold(1, 0, 150), hold(2, 97, 160)}, 1, ClassBroken, 1, 2, ClassBroken},
		// A renewal Redis confirmed extends the promise.
		{"renewed", []Hold{renewed, hold(2, 200, 240)}, 1, ClassBroken, 1, 2, ClassBroken},
		// A broken lock ranks before a longer overlap, though it came second: a late
		// release removing the next holder's lock starts from an outlived lease.
		{"broken first", []Hold{hold(1, 0, 300), hold(2, 150, 290), hold(3, 160, 170)}, 1, ClassBroken, 2, 3, ClassOverlap},
		// The earlier hold surely inside is not always the one that leaves last.
		{"the one still inside", []Hold{hold(1, 0, 400), hold(2, 200, 260), hold(3, 210, 230)}, 1, ClassBroken, 2, 3, ClassOverlap},
		// Told no once the second had the key (a restart took it inside the first's
		// lease): the first did not write; their times overlapped, nothing more.
		{"told no inside the lease", []Hold{asked(hold(1, 0, 80), 70, true), hold(2, 30, 60)}, 0, ClassOverlap, 1, 2, ClassOverlap},
		// Told yes once the second had the key, even past its own lease: it wrote on its
		// library's wrong word.
		{"told yes after the next got in", []Hold{asked(hold(1, 0, 150), 125, false), hold(2, 120, 160)}, 1, ClassBroken, 1, 2, ClassBroken},
		// Told yes before the next got in: the library was right when it answered.
		{"told yes before the next got in", []Hold{asked(hold(1, 0, 150), 110, false), hold(2, 120, 160)}, 0, ClassOverlap, 1, 2, ClassOverlap},
		// An acquire answered after its own lease had run out was never surely inside.
		{"answered too late", []Hold{hold(1, 0, 80), {Buyer: 2, Sent: 0, Enter: 50 * ms, Leave: 60 * ms, Lease: 40 * ms}}, 0, ClassOverlap, 1, 2, ClassOverlap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			broken, worst, first := lockOverlaps(tt.holds)
			if broken != tt.broken {
				t.Errorf("broken: want %d, got %d", tt.broken, broken)
			}
			if tt.began == "" && first != nil || tt.began != "" && (first == nil || first.Class != tt.began) {
				t.Errorf("first violation: want %q, got %+v", tt.began, first)
			}
			if tt.worst == "" {
				if len(worst) > 0 {
					t.Errorf("want no violation, got %+v", worst)
				}
				return
			}
			if len(worst) == 0 {
				t.Fatalf("want a %s violation, got none", tt.worst)
			}
			if v := worst[0]; v.Class != tt.worst || v.First.Buyer != tt.first || v.Second.Buyer != tt.other {
				t.Errorf("want %s of %d and %d, got %s of %d and %d", tt.worst, tt.first, tt.other, v.Class, v.First.Buyer, v.Second.Buyer)
			}
		})
	}
}

func TestViolationsKeepTheWorstFew(t *testing.T) {
	var holds []Hold
	for i := range 10 { // each overlaps the last by i ms, past the previous lease
		holds = append(holds, hold(i, i*200, i*200+200+i))
	}
	_, worst, _ := lockOverlaps(holds)
	if len(worst) != maxViolations {
		t.Fatalf("want %d kept, got %d", maxViolations, len(worst))
	}
	for i, v := range worst { // the longest, after buyers 8, 7 and 6
		if first, d := 8-i, time.Duration(7-i)*ms; v.Class != ClassOverlap || v.First.Buyer != first || v.For != d {
			t.Errorf("violation %d: want the overlap after buyer %d of %s, got %+v", i, first, d, v)
		}
	}
}

// A lock alive at the end is a zombie only when nobody can answer for it.
func TestZombieAndExpiredAtRelease(t *testing.T) {
	clean := []Hold{hold(1, 0, 10), hold(2, 10, 20)}
	died := append(clean[:1:1], Hold{Buyer: 2, Enter: 11 * ms, Leave: 15 * ms, Died: true})
	unanswered := append(clean[:1:1], Hold{Buyer: 2, Enter: 11 * ms, Leave: 15 * ms})
	expired := append(clean[:1:1], hold(2, 10, 20))
	expired[1].Expired = true
	tests := []struct {
		name   string
		holds  []Hold
		ttl    time.Duration
		errors int
		want   bool
	}{
		{"released and gone", clean, 0, 0, false},
		{"released and still there", clean, 500 * ms, 0, true},
		{"its holder died with it", died, 500 * ms, 0, false},
		{"the release was never answered", unanswered, 500 * ms, 0, false},
		{"the release found it gone", expired, 500 * ms, 0, false},
		{"an acquire's reply may have been lost", clean, 500 * ms, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &Ledger{InitialStock: 2, Entries: []Entry{bought(1, 10, 1), bought(11, 20, 0)}, Holds: tt.holds}
			r := Check(l, &Final{Stock: 0, Orders: 2, LockTTL: tt.ttl, Horizon: time.Second, Errors: tt.errors})
			if r.Zombie != tt.want {
				t.Errorf("zombie: want %v, got %v (%s)", tt.want, r.Zombie, r.Verdict())
			}
			if tt.want && (r.Class() != ClassStuck || r.Verdict() != "ZOMBIE-LOCK 500ms") {
				t.Errorf("want STUCK with ZOMBIE-LOCK 500ms, got %s: %s", r.Class(), r.Verdict())
			}
		})
	}
	r := Check(&Ledger{InitialStock: 2, Entries: []Entry{bought(1, 10, 1), bought(11, 20, 0)}, Holds: expired}, &Final{Orders: 2})
	if r.ExpiredAtRelease != 1 || r.Class() != ClassSafe || r.Verdict() != "EXPIRED-AT-RELEASE 1" {
		t.Errorf("want a SAFE sale warning of 1 release that found its lock gone, got %s: %s", r.Class(), r.Verdict())
	}
}

func TestBrokenLockClassAndCell(t *testing.T) {
	l := &Ledger{InitialStock: 2, Entries: []Entry{bought(1, 80, 1), bought(31, 60, 0)},
		Holds: []Hold{hold(0, 0, 80), hold(1, 30, 60)}}
	r := Check(l, &Final{Stock: 0, Orders: 2})
	if r.Class() != ClassBroken || r.Cell() != "LOCK-BROKEN 1" || r.Verdict() != "LOCK-BROKEN 1" {
		t.Errorf("want LOCK-BROKEN 1, got %s: %s (%s)", r.Class(), r.Cell(), r.Verdict())
	}
	// The same two holds with both reading 2 and writing 1: oversold through a broken lock.
	r = Check(l, &Final{Stock: 1, Orders: 2})
	r.Oversold = 1
	if r.Cell() != "OVERSOLD 1 BROKEN" {
		t.Errorf("want OVERSOLD 1 BROKEN, got %s", r.Cell())
	}
	if !ClassOversold.Admits(ClassBroken) || ClassOverlap.Admits(ClassBroken) || !ClassBroken.Admits(ClassOverlap) {
		t.Error("want LOCK-BROKEN ranked between OVERLAP and OVERSOLD")
	}
}

// A hold outlived its lease when its release began, or was answered, past the lease's
// end, counted from the acquire's answer (Redis began the TTL by then) and the margin;
// the first such, by its release, is kept.
func TestFirstOutlived(t *testing.T) {
	dead := hold(5, 0, 300)
	dead.Died = true
	tests := []struct {
		name  string
		holds []Hold
		want  int // buyer; 0: none
	}{
		{"in time", []Hold{hold(1, 0, 50), hold(2, 50, 149)}, 0},
		{"within the margin and the acquire's answer", []Hold{func() Hold { h := hold(1, 0, 101); h.Released = 102 * ms; return h }()}, 0},
		{"past it", []Hold{hold(1, 0, 50), hold(2, 0, 104)}, 2},
		{"a release answered past it", []Hold{func() Hold { h := hold(2, 0, 90); h.Released = 110 * ms; return h }()}, 2},
		{"the first by its release", []Hold{hold(3, 200, 400), hold(4, 100, 250), hold(1, 0, 50)}, 4},
		{"a holder that died", []Hold{dead}, 0},
	}
	for _, tt := range tests {
		got := firstOutlived(tt.holds)
		if tt.want == 0 && got != nil || tt.want != 0 && (got == nil || got.Buyer != tt.want) {
			t.Errorf("%s: want buyer %d, got %+v", tt.name, tt.want, got)
		}
	}
}

// The holders told "you hold it" once the next holder had taken the lock are counted,
// the first of them with how long after the next got in it was told; a holder told no,
// or asked before the next got in, is not. The windows: the longest a library said
// "held" while another held the lock, and the longest a holder waited to be told no
// once its lock was gone (the lease's end, or the next acquire where that came first).
func TestLibraryWord(t *testing.T) {
	at := func(h Hold, askedMs int, no bool) Hold {
		h.Asked, h.Told, h.ToldNo = time.Duration(askedMs)*ms, time.Duration(askedMs+2)*ms, no
		return h
	}
	holds := []Hold{
		at(hold(1, 0, 150), 125, false), // told yes 6ms after buyer 2 got in at 121ms
		hold(2, 120, 160),
		at(hold(3, 300, 450), 430, true), // told no 32ms after its lease ran out at 400ms
		hold(4, 420, 460),
		at(hold(5, 600, 650), 610, false), // told yes before buyer 6
		hold(6, 700, 760),
		at(hold(7, 800, 950), 920, true), // told no 71ms after buyer 9 got in at 851ms, inside its lease
		hold(9, 850, 990),
		at(hold(8, 1000, 1050), 1010, true), // told no inside its lease, before anyone got in
	}
	w := libraryWord(holds)
	if w.ToldHeld != 1 || w.FirstToldHeld == nil || w.FirstToldHeld.First.Buyer != 1 || w.FirstToldHeld.Second.Buyer != 2 || w.FirstToldHeld.ToldAfter != 6*ms {
		t.Errorf("want buyer 1 told 6ms after buyer 2 got in, once; got %d, %+v", w.ToldHeld, w.FirstToldHeld)
	}
	if want := (Word{Asked: 5, ToldNo: 3, ToldHeld: 1, FirstToldHeld: w.FirstToldHeld, Stale: 6 * ms, ToBeTold: 71 * ms}); w != want {
		t.Errorf("want %+v, got %+v", want, w)
	}
	if w := libraryWord([]Hold{hold(1, 0, 50), hold(2, 50, 90)}); w != (Word{}) {
		t.Errorf("holders not asked: want nothing, got %+v", w)
	}
}

// TestToldHeldFinding: a sale whose library told a holder "you hold it" once the next
// one had the lock names it among its findings, for the analyses to judge.
func TestToldHeldFinding(t *testing.T) {
	r := Report{LockBroken: 2, Overlaps: 2, Word: Word{Asked: 5, ToldHeld: 2}}
	if f := r.Findings(); !slices.Contains(f, KindToldHeld+" 2") {
		t.Errorf("want %s 2 among %v", KindToldHeld, f)
	}
	if f := (Report{LockBroken: 2, Overlaps: 2, Word: Word{Asked: 5}}).Findings(); slices.ContainsFunc(f, func(s string) bool { return strings.HasPrefix(s, KindToldHeld) }) {
		t.Errorf("no holder told wrong: want no %s, got %v", KindToldHeld, f)
	}
}
