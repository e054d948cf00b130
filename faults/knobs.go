package faults

import (
	"cmp"
	"slices"
	"strconv"
)

// Knob is a setting of a fault that changes what the fault does to a sale: what an
// explorer varies, and what a shrink may make smaller. Each fault's knobs are read off
// its entry in the table, so that a fault added there is explored and shrunk too.
type Knob struct {
	// Key is the setting as a plan writes it: nth, for, by, count, mode, persist, p.
	Key string
	// Choices are a named setting's values, its default first (a mode, a persistence);
	// nil for a number.
	Choices []string
	// Shrinks: a smaller value makes a smaller sale (an earlier victim, a shorter
	// fault, fewer workers), so that a shrink tries it.
	Shrinks bool
	// Default is the value a plan that does not set it gets, as written for a reader.
	Default string
}

// Knobs are the settings that change what the fault does, read off its row of the
// table alone.
func (s Spec) Knobs() []Knob {
	var ks []Knob
	if s.Fires == OnVictim || s.Fires == OnAcquire || s.Fires == OnStep {
		ks = append(ks, Knob{Key: "nth", Shrinks: true, Default: strconv.Itoa(DefaultNth)})
	}
	unit := "the TTL"
	switch {
	case s.Applies == Queues:
		unit = "the visibility timeout"
	case s.Applies&Queues != 0:
		unit = "the TTL (a queue's visibility timeout)"
	}
	length := strconv.FormatFloat(cmp.Or(s.length, DefaultLength), 'g', -1, 64) + "x " + unit
	switch {
	case s.by:
		ks = append(ks, Knob{Key: "by", Shrinks: true, Default: length})
	case (s.victim != nil || s.server != nil) && !s.timeless:
		ks = append(ks, Knob{Key: "for", Shrinks: true, Default: length})
	}
	if s.span {
		ks = append(ks, Knob{Key: "count", Shrinks: true, Default: strconv.Itoa(DefaultCount)})
	}
	if s.choice != "" {
		ks = append(ks, Knob{Key: s.choice, Choices: slices.Clone(s.choices), Default: s.choices[0]})
	}
	if s.Rated() {
		ks = append(ks, Knob{Key: "p", Default: "off"})
	}
	return ks
}

// Explorable lists the faults of sales of a an explorer may draw: every one in the
// table, the opt-in ones too, less those on a topology of their own (Sentinel, Cluster)
// unless infra.
func Explorable(a Applies, infra bool) []Kind {
	var kinds []Kind
	for _, s := range specs {
		if s.Applies&a != 0 && (infra || !s.Infra()) {
			kinds = append(kinds, s.Kind)
		}
	}
	return kinds
}

func words[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
