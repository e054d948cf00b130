package faults

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/oracle"
)

// Verdicts is what a design documents it earns in a sale: the classes its verdict may
// fall in with no fault (None), and under each fault alone (Under). A fault not listed
// is not asserted: the outcome depends on timing the harness does not control. A
// design carries its own (lockimpl.Impl.Documented, queueimpl.Impl.Documented); the
// tests assert every one on a real Redis, and a sale's record says whether it earned
// one of them.
type Verdicts struct {
	None  []oracle.Class
	Under map[Kind][]oracle.Class
}

// Everywhere is want with no fault and under every fault of sales of a.
func Everywhere(a Applies, want []oracle.Class) Verdicts {
	v := Verdicts{None: want, Under: map[Kind][]oracle.Class{}}
	for _, k := range Kinds(a) {
		v.Under[k] = want
	}
	return v
}

// With returns v with want under the faults named; a nil want asserts nothing there.
func (v Verdicts) With(want []oracle.Class, kinds ...Kind) Verdicts {
	v.Under = maps.Clone(v.Under)
	for _, k := range kinds {
		if want == nil {
			delete(v.Under, k)
		} else {
			v.Under[k] = want
		}
	}
	return v
}

// WithNone returns v with want under no fault.
func (v Verdicts) WithNone(want []oracle.Class) Verdicts {
	v.None = want
	return v
}

// Documented reports whether v documents anything.
func (v Verdicts) Documented() bool { return v.None != nil || len(v.Under) > 0 }

// For returns the classes documented for plan, and whether any are: only for no fault
// or for one fault whose settings keep its meaning (see Fault.AsDocumented). A design
// that takes no part in a fault (NOT-EXERCISED) takes none whatever its settings: lua
// has no holder to pause at any rate.
func (v Verdicts) For(plan Plan) ([]oracle.Class, bool) {
	if len(plan) == 0 {
		return v.None, v.None != nil
	}
	if len(plan) != 1 {
		return nil, false
	}
	c, ok := v.Under[plan[0].Kind]
	switch {
	case plan[0].AsDocumented():
		return c, ok
	case ok && slices.Equal(c, []oracle.Class{oracle.ClassNotExercised}):
		return c, true
	}
	return nil, false
}

// ParseVerdicts reads what a design written outside Go documents (a design file's
// "documented", say): the classes its verdict may fall in, by fault name, "none" for no
// fault. Every fault must be one of sales of a, every class one a sale can end in; an
// error names where, after field.
func ParseVerdicts(field string, byFault map[string][]string, a Applies) (Verdicts, error) {
	var v Verdicts
	for _, fault := range slices.Sorted(maps.Keys(byFault)) {
		at := field + "." + fault
		if len(byFault[fault]) == 0 {
			return v, fmt.Errorf("%s: no class (classes: %s)", at, joined(oracle.Classes()))
		}
		var classes []oracle.Class
		for _, name := range byFault[fault] {
			class := oracle.Class(name)
			if _, ok := class.Rank(); !ok {
				return v, fmt.Errorf("%s: unknown class %q (classes: %s)", at, name, joined(oracle.Classes()))
			}
			classes = append(classes, class)
		}
		if fault == None {
			v.None = classes
			continue
		}
		if !slices.Contains(Kinds(a), Kind(fault)) {
			return v, fmt.Errorf("%s: not a fault of %s sales (faults: none, %s)", at, a, joined(Kinds(a)))
		}
		if v.Under == nil {
			v.Under = map[Kind][]oracle.Class{}
		}
		v.Under[Kind(fault)] = classes
	}
	return v, nil
}

// joined is names as a list a message reads.
func joined[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, ", ")
}
