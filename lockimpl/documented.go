package lockimpl

import (
	"slices"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
)

// The classes the built-in designs document, as sets a verdict may fall in.
var (
	safe     = []oracle.Class{oracle.ClassSafe}
	oversold = []oracle.Class{oracle.ClassOversold}
	// lateWrite is what a second holder's write does: it loses the first one's update,
	// and oversells once the stock runs out, which on a machine so loaded that most
	// buyers give up first it may not (token under redis-pause read LOST 4 with 72 of
	// 100 buyers gone, beside the other packages' tests on two CPUs).
	lateWrite = []oracle.Class{oracle.ClassOversold, oracle.ClassLost}
	stuck     = []oracle.Class{oracle.ClassStuck}
	// stealRace is what seed-setnx's steal of a live lock does: a second holder inside
	// the first one's lease, whose write nearly always loses an update and oversells
	// (OVERSOLD 40 of 40 seeds alone, 60 of 60 beside three busy loops), but whose holds
	// may also meet without their reads and writes interleaving: the long suite in CI
	// once read LOCK-BROKEN 46 and not one update lost.
	stealRace  = []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassBroken}
	noOversell = []oracle.Class{oracle.ClassSafe, oracle.ClassOverlap, oracle.ClassStuck}
	// fenced: a fault that takes the key from under a live holder lets a second one in
	// inside the first one's lease, the lock broken, but the fence refuses the stale write.
	fenced = append(slices.Clone(noOversell), oracle.ClassBroken)
	// Redlock's: no second holder, though split votes may keep everyone out; or a
	// second holder, who may or may not get to write before the sale stalls.
	safeOrStuck  = []oracle.Class{oracle.ClassSafe, oracle.ClassStuck}
	secondHolder = []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassOverlap}
	// aRace is a verdict that a race decides: a second holder gets in, or nobody does.
	aRace = []oracle.Class{oracle.ClassSafe, oracle.ClassStuck, oracle.ClassOversold, oracle.ClassLost, oracle.ClassOverlap, oracle.ClassBroken}
	// notExercised: the design has no part the fault acts on, so it never strikes.
	notExercised = []oracle.Class{oracle.ClassNotExercised}
)

// everywhere is want with no fault and under every lock fault but term-holder and
// app-pause: a deploy's SIGTERM reaches a holder with a process of its own (an
// adapter's), a pause of a whole instance its processes, and every built-in design's
// holders are goroutines of the harness.
func everywhere(want []oracle.Class) faults.Verdicts {
	return faults.Everywhere(faults.Locks, want).With(notExercised, faults.TermHolder, faults.AppPause)
}

// ttlLock is what a lock that relies on its TTL alone earns: safe while holders are alive
// and quick, a late write whenever the lock is lost under a holder that then writes: a
// clock jump on its server expires it early, renewed or not (a watchdog's PEXPIRE finds
// it gone; token-wait's replica deletes it when the master's expiry reaches it).
var ttlLock = everywhere(lateWrite).WithNone(safe).With(safe, faults.CrashAcquire, faults.CrashHolder, faults.NetLatency)

// What the designs earn as a scheduled drop's scheduler lock, documented with no fault
// and under the faults a scheduler meets: an instance that dies holding the lock, one
// paused past the TTL (a stop-the-world pause), and a failover that loses the lock.
// A lock taken from a live holder who then fires fires a wave twice (OVERSOLD); the
// instances' polls are spaced, so without a fault no two meet, lock or no lock, save
// by the odd stall (dropRace). Two that meet hold at once (LOCK-BROKEN), and fire twice
// only when they met as a wave fell due (OVERSOLD): alone, on two CPUs, none earned
// LOCK-BROKEN 5 in one fresh clone's make test, so the stall is a rate, not a never.
var (
	dropRace = []oracle.Class{oracle.ClassSafe, oracle.ClassBroken, oracle.ClassOversold}
	dropTTL  = drop(safe, safe, oversold, oversold)
)

// drop is a design's documented drop verdicts.
func drop(none, crashHolder, clientPause, failover []oracle.Class) faults.Verdicts {
	return faults.Verdicts{None: none, Under: map[faults.Kind][]oracle.Class{
		faults.CrashHolder: crashHolder, faults.ClientPause: clientPause, faults.Failover: failover}}
}
