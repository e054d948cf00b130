package results

import (
	"fmt"
	"time"

	"github.com/stockbench/stockbench/oracle"
)

// Guarantee is the delivery guarantee a queue sale showed: what became of its orders,
// read from the sale's ledger, not from what the design promises. With a naive fulfil it
// is the queue's own; with an idempotent one, what such a fulfil makes of it.
type Guarantee string

// The guarantees, each described once in Describe.
const (
	Once         Guarantee = "once"
	AtMostOnce   Guarantee = "at most once"
	AtLeastOnce  Guarantee = "at least once"
	LostOrders   Guarantee = "lost"
	Neither      Guarantee = "neither"
	GuessNothing Guarantee = "unknown"
	Unexercised  Guarantee = "not exercised"
)

// Guarantees lists them in the order a legend gives them.
var Guarantees = []Guarantee{Once, AtMostOnce, AtLeastOnce, LostOrders, Neither, GuessNothing, Unexercised}

// Describe says what g means, in one clause.
func (g Guarantee) Describe() string {
	switch g {
	case Once:
		return "every order done once"
	case AtMostOnce:
		return "none done twice, and none lost but the tasks dead workers held"
	case AtLeastOnce:
		return "none lost, some done twice"
	case LostOrders:
		return "none done twice, but orders lost beyond what dead workers held (a server that forgot its queue)"
	case Neither:
		return "orders lost and orders done twice"
	case GuessNothing:
		return "Redis could not be read after the sale, or the sale did not finish"
	case Unexercised:
		return "the fault never struck"
	}
	return string(g)
}

// Guarantee is the delivery guarantee the queue sale r showed; ok is false for a sale
// that is not a queue's.
func (r *Run) Guarantee() (g Guarantee, ok bool) {
	q := r.Queue
	if q == nil {
		return "", false
	}
	held := 0 // the tasks dead workers held that never came back
	if r.Recovery != nil {
		held = r.Recovery.Never
	}
	lost, twice := q.Lost > 0, q.DuplicatedEffects > 0 || q.Phantom > 0
	switch {
	case !r.Complete || q.FinalUnknown:
		return GuessNothing, true
	case lost && twice:
		return Neither, true
	case twice:
		return AtLeastOnce, true
	case lost && q.Lost <= held:
		return AtMostOnce, true
	case lost:
		return LostOrders, true
	case r.Verdict.Class == oracle.ClassNotExercised:
		return Unexercised, true
	}
	return Once, true
}

// RecoveryText says what became of the tasks the sale's workers died holding: how many
// came back and how long that took (the median and the slowest), or "" when no worker
// died holding one.
func (r *Run) RecoveryText() string {
	rc := r.Recovery
	if rc == nil || rc.Deaths == 0 {
		return ""
	}
	s := fmt.Sprintf("%d of %d back", rc.Redelivered, rc.Deaths)
	if l, ok := r.Latency[Recovery.String()]; ok && l.Count > 0 {
		s += fmt.Sprintf(", in %s (slowest %s)", roundMs(l.P50Us), roundMs(l.MaxUs))
	}
	return s
}

// roundMs writes a latency in microseconds for a sheet, to the millisecond: under one,
// a task another worker already held when its worker died.
func roundMs(us int64) string {
	if us < 1000 {
		return "under 1ms"
	}
	return (time.Duration(us) * time.Microsecond).Round(time.Millisecond).String()
}
