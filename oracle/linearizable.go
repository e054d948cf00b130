package oracle

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Linearizability is what porcupine says of the confirmed purchases: could they have
// happened one at a time, in an order that respects real time, each taking one unit off
// the counter?
type Linearizability struct {
	Verdict LinearVerdict `json:"verdict"`
	// Exact is set when the whole history was checked against the counter itself; else
	// Windows windows of consecutive purchases were checked against a weaker model (each
	// purchase leaves less than the one before), which never reports a false violation.
	Exact   bool `json:"exact"`
	Windows int  `json:"windows"`
	Ops     int  `json:"ops"`
	// FirstViolation is the earliest window that could not be linearized.
	FirstViolation *Window `json:"first_violation,omitempty"`
}

// LinearVerdict is porcupine's answer, as results.json writes it.
type LinearVerdict string

// The verdicts.
const (
	Linearizable    LinearVerdict = "linearizable"
	NotLinearizable LinearVerdict = "not linearizable"
	// LinearUnknown: a check ran out of time.
	LinearUnknown LinearVerdict = "unknown"
)

// linearVerdict turns porcupine's result into ours.
func linearVerdict(r porcupine.CheckResult) LinearVerdict {
	switch r {
	case porcupine.Ok:
		return Linearizable
	case porcupine.Illegal:
		return NotLinearizable
	}
	return LinearUnknown
}

// Window is a stretch of the history, by the time its purchases began; Index counts
// windows of its size from the start.
type Window struct {
	Index int           `json:"index"`
	From  time.Duration `json:"from_ns"`
	To    time.Duration `json:"to_ns"`
	Ops   int           `json:"ops"`
	// History is the window's purchases, kept so that porcupine can draw the violation
	// (see Visualize); Initial is the stock when they were checked against the counter
	// itself (the whole history), nil when against the weaker model of a window.
	History []Purchase `json:"history,omitempty"`
	Initial *int64     `json:"initial,omitempty"`
}

// Purchase is one confirmed purchase of a history: its buyer, when it began and ended
// (offsets from the sale's start) and the stock it left.
type Purchase struct {
	Buyer  int   `json:"buyer"`
	Call   int64 `json:"call_ns"`
	Return int64 `json:"return_ns"`
	Left   int64 `json:"left"`
}

// Defaults for CheckLinearizable.
const (
	// ExactUpTo is the largest history checked whole.
	ExactUpTo = 1000
	// WindowOps is the size of a window in a larger history.
	WindowOps = 200
)

// CheckLinearizable checks the confirmed purchases in l with porcupine, giving each check
// at most timeout. A lock purchase spans its hold (the read and the write are inside it);
// a lock-free one spans the whole purchase.
func CheckLinearizable(l *Ledger, timeout time.Duration) Linearizability {
	ops := purchases(l)
	res := Linearizability{Verdict: Linearizable, Ops: len(ops)}
	if len(ops) <= ExactUpTo {
		res.Exact, res.Windows = true, 1
		v := check(counter(l.InitialStock), ops, timeout)
		if res.Verdict = linearVerdict(v); v == porcupine.Illegal {
			res.FirstViolation = locate(ops, timeout)
			if res.FirstViolation.Ops == len(ops) { // no short window shows it: the whole, as checked
				res.FirstViolation.Initial = &l.InitialStock
			}
		}
		return res
	}
	for i := 0; i < len(ops); i += WindowOps {
		w := ops[i:min(i+WindowOps, len(ops))]
		res.Windows++
		switch v := check(decreasing(), w, timeout); v {
		case porcupine.Illegal:
			res.Verdict, res.FirstViolation = NotLinearizable, window(i/WindowOps, w)
			return res
		case porcupine.Unknown:
			res.Verdict = linearVerdict(v)
		}
	}
	return res
}

// locate narrows a violation of the whole history down to the first short window that
// shows it on its own; the whole history when none does.
func locate(ops []porcupine.Operation, timeout time.Duration) *Window {
	const short = 20
	for i := 0; i < len(ops); i += short {
		w := ops[i:min(i+short, len(ops))]
		if check(decreasing(), w, timeout) == porcupine.Illegal {
			return window(i/short, w)
		}
	}
	return window(0, ops)
}

func check(m porcupine.Model, ops []porcupine.Operation, timeout time.Duration) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(m, ops, timeout)
}

// purchases are the confirmed purchases as operations whose output is the stock left,
// in order of their start.
func purchases(l *Ledger) []porcupine.Operation {
	var ops []porcupine.Operation
	started := l.Started()
	for i := range started {
		e := &started[i]
		if e.Outcome != Bought {
			continue
		}
		call, ret := e.Start, e.Done
		if e.Held {
			call, ret = e.Enter, e.Leave
		}
		ops = append(ops, porcupine.Operation{ClientId: i, Call: int64(call), Return: int64(ret), Output: e.Left})
	}
	slices.SortFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	return ops
}

func window(i int, ops []porcupine.Operation) *Window {
	w := &Window{Index: i, From: time.Duration(ops[0].Call), Ops: len(ops)}
	for _, op := range ops {
		w.To = max(w.To, time.Duration(op.Return))
		w.History = append(w.History, Purchase{Buyer: op.ClientId, Call: op.Call, Return: op.Return, Left: op.Output.(int64)})
	}
	return w
}

// Visualize writes porcupine's own drawing of w, a window that could not be linearized,
// as a self-contained HTML page: the purchases on a time line, and how far a
// linearization got before none could go on.
func Visualize(w *Window, out io.Writer) error {
	if w == nil || len(w.History) == 0 {
		return errors.New("oracle: visualize: no history kept for this window")
	}
	m := decreasing()
	if w.Initial != nil {
		m = counter(*w.Initial)
	}
	m.DescribeOperation = func(_, output any) string { return fmt.Sprintf("buy -> %d left", output.(int64)) }
	m.DescribeState = func(state any) string {
		if s := state.(int64); s != unknown {
			return fmt.Sprintf("%d left", s)
		}
		return "before the window"
	}
	ops := make([]porcupine.Operation, len(w.History))
	for i, p := range w.History {
		ops[i] = porcupine.Operation{ClientId: p.Buyer, Call: p.Call, Return: p.Return, Output: p.Left}
	}
	_, info := porcupine.CheckOperationsVerbose(m, ops, 10*time.Second)
	if err := porcupine.Visualize(m, info, out); err != nil {
		return fmt.Errorf("oracle: visualize: %w", err)
	}
	return nil
}

// counter is the stock counter: a purchase leaves exactly one unit less.
func counter(initial int64) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return initial },
		Step: func(state, _, output any) (bool, any) {
			left := output.(int64)
			return state.(int64)-1 == left, left
		},
	}
}

// unknown is the state before a window's first purchase.
const unknown = math.MinInt64

// decreasing is the weaker model for a window of a longer history: purchases outside the
// window may fall between those inside, so each may leave any amount less than the one
// before, but never as much or more.
func decreasing() porcupine.Model {
	return porcupine.Model{
		Init: func() any { return int64(unknown) },
		Step: func(state, _, output any) (bool, any) {
			left := output.(int64)
			return state.(int64) == unknown || left < state.(int64), left
		},
	}
}
