package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// GlanceLine is one class the runs earned, for the report's opening: what the class
// means for a sale, and which designs earned it in which sales.
type GlanceLine struct {
	Class oracle.Class
	// Meaning is the class in words (oracle.Class.Meaning).
	Meaning string
	// Where is, per scenario, the designs that earned the class there: a lone sale with
	// what it meant (results.Run.Consequence), several with the faults they earned it
	// under.
	Where []string
}

// glanceOrder is the order of the opening's lines: harm first, then findings that left
// the stock intact, then what says nothing, then nothing found.
var glanceOrder = []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassDuplicated, oracle.ClassReordered,
	oracle.ClassBroken, oracle.ClassOverlap, oracle.ClassStuck, oracle.ClassUnknown, oracle.ClassNotExercised, oracle.ClassSafe}

// Glance is the report's opening: every class the runs earned, most severe first, each
// naming every design that earned it and where, from the same verdicts as the matrix
// cells.
func Glance(runs []results.Run) []GlanceLine {
	var lines []GlanceLine
	for _, c := range glanceOrder {
		line := GlanceLine{Class: c, Meaning: c.Meaning()}
		for _, g := range bySubject(runs) {
			var items []string
			for _, design := range g.designs {
				sales := g.runs[design]
				var got []*results.Run
				for _, r := range sales {
					if classOrUnknown(r) == c {
						got = append(got, r)
					}
				}
				if len(got) > 0 {
					items = append(items, glanceItem(design, got, len(sales)))
				}
			}
			if len(items) > 0 {
				line.Where = append(line.Where, g.title()+": "+strings.Join(items, ", "))
			}
		}
		if len(line.Where) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// glanceItem names a design that earned a class in got of its n sales of one scenario:
// with what it meant when that is its only sale, with the fault plan when it is one of
// several, and with how many of them otherwise (the matrix below says which).
func glanceItem(design string, got []*results.Run, n int) string {
	switch {
	case n == 1:
		return design + ": " + got[0].Consequence()
	case len(got) == 1:
		return fmt.Sprintf("%s (%s)", design, got[0].FaultPlan())
	}
	return fmt.Sprintf("%s ×%d", design, len(got))
}

// classOrUnknown is r's class, UNKNOWN for a record without one.
func classOrUnknown(r *results.Run) oracle.Class {
	if r.Verdict.Class == "" {
		return oracle.ClassUnknown
	}
	return r.Verdict.Class
}

// subjectRuns is one scenario's runs by design, in the order they first appear.
type subjectRuns struct {
	subject string
	designs []string
	runs    map[string][]*results.Run
}

// title names the scenario, and how many fault plans its matrix has when it has several.
func (s subjectRuns) title() string {
	plans := 0
	for _, rs := range s.runs {
		plans = max(plans, len(rs))
	}
	if plans > 1 {
		return fmt.Sprintf("%s (of %d fault plans)", s.subject, plans)
	}
	return s.subject
}

func bySubject(runs []results.Run) []subjectRuns {
	var out []subjectRuns
	for i := range runs {
		r := &runs[i]
		k := slices.IndexFunc(out, func(s subjectRuns) bool { return s.subject == r.Subject() })
		if k < 0 {
			out = append(out, subjectRuns{subject: r.Subject(), runs: map[string][]*results.Run{}})
			k = len(out) - 1
		}
		s := &out[k]
		if _, ok := s.runs[r.Label()]; !ok {
			s.designs = append(s.designs, r.Label())
		}
		s.runs[r.Label()] = append(s.runs[r.Label()], r)
	}
	return out
}

// WriteGlanceMarkdown writes the opening as a Markdown list.
func WriteGlanceMarkdown(b io.Writer, lines []GlanceLine) {
	for _, l := range lines {
		fmt.Fprintf(b, "- **%s** (%s): %s\n", l.Class, l.Meaning, strings.Join(l.Where, "; "))
	}
}
