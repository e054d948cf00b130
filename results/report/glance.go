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

// glanceOrder is the order of the opening's lines: the findings most severe first (harm,
// then those that left the stock intact), then what says nothing, then nothing found.
var glanceOrder = func() []oracle.Class {
	findings := oracle.Classes()[1:] // least severe first, SAFE left out
	slices.Reverse(findings)
	return append(findings, oracle.ClassUnknown, oracle.ClassNotExercised, oracle.ClassSafe)
}()

// Glance is the report's opening: every class the runs earned, most severe first, each
// naming every design that earned it and where, from the same verdicts as the matrix
// cells (one matrix per scenario, as results.Matrices lays them out).
func Glance(runs []results.Run) []GlanceLine {
	matrices := results.Matrices(runs)
	var lines []GlanceLine
	for _, c := range glanceOrder {
		line := GlanceLine{Class: c, Meaning: c.Meaning()}
		for _, m := range matrices {
			var items []string
			for _, design := range m.Locks {
				var sales, got []*results.Run
				for _, f := range m.Faults {
					if r := m.Run(design, f); r != nil {
						sales = append(sales, r)
						if classOrUnknown(r) == c {
							got = append(got, r)
						}
					}
				}
				if len(got) > 0 {
					items = append(items, glanceItem(design, got, len(sales)))
				}
			}
			if len(items) > 0 {
				line.Where = append(line.Where, title(m)+": "+strings.Join(items, ", "))
			}
		}
		if len(line.Where) > 0 {
			lines = append(lines, line)
		}
	}
	return lines
}

// title names a matrix's scenario, and how many fault plans it has when it has several.
func title(m results.Matrix) string {
	if len(m.Faults) > 1 {
		return fmt.Sprintf("%s (of %d fault plans)", m.Scenario, len(m.Faults))
	}
	return m.Scenario
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

// WriteGlanceMarkdown writes the opening as a Markdown list.
func WriteGlanceMarkdown(b io.Writer, lines []GlanceLine) {
	for _, l := range lines {
		fmt.Fprintf(b, "- **%s** (%s): %s\n", l.Class, l.Meaning, strings.Join(l.Where, "; "))
	}
}
