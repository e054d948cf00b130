package oracle

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// Line is the violation as one line of its timeline, for a CI annotation or a test
// report where no picture goes: who held, who came in beside them, when, for how long.
func (v Violation) Line() string {
	return fmt.Sprintf("%s at %s: buyer %d held since %s (lease to %s), buyer %d came in at %s; both held for %s",
		v.Class, at(v.At), v.First.Buyer, at(v.First.Enter), at(v.First.Lease), v.Second.Buyer, at(v.Second.Enter), at(v.For))
}

// Line is the mishandled task as one line of its timeline: each delivery, when it was
// taken and what the worker made of it.
func (v TaskViolation) Line() string {
	takes := make([]string, len(v.Takes))
	for i, t := range v.Takes {
		takes[i] = fmt.Sprintf("taken at %s, %s", at(t.End), t.Result)
	}
	return fmt.Sprintf("%s task %s: applied %d times; %s", cmp.Or(string(v.Class), "LEASE-OVERLAP"), v.Task, v.Applied,
		cmp.Or(strings.Join(takes, "; "), "never taken"))
}

// FirstViolation is the worst violation a lock or queue report kept, as one line; ""
// when it kept none (a sale that oversold without two holders, a merged sale).
func FirstViolation(lock *Report, queue *QueueReport) string {
	switch {
	case queue != nil && len(queue.Tasks) > 0:
		return queue.Tasks[0].Line()
	case lock != nil && len(lock.Violations) > 0:
		return lock.Violations[0].Line()
	}
	return ""
}

// String names what a worker made of a task.
func (r TakeResult) String() string {
	switch r {
	case TakeFailed:
		return "failed"
	case TakeFulfilled:
		return "fulfilled"
	case TakeRefused:
		return "refused"
	case TakeRepeat:
		return "found done"
	case TakeCrashed:
		return "worker crashed"
	}
	return fmt.Sprintf("result %d", uint8(r))
}

// at is a time on the sale's clock, to the tenth of a millisecond.
func at(d time.Duration) string { return d.Round(100 * time.Microsecond).String() }
