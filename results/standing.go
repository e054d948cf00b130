package results

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/oracle"
)

// Standing is what a sale's verdict counts as for the exit status of the command that
// ran it: the one rule of every command that runs sales.
type Standing int

// The standings, in the order a command's exit status ranks them: a sale that did worse
// outranks one that could not finish, which outranks one that held.
const (
	// Held: the sale earned a class its design documents for its fault plan, or did
	// better; or, for a design that documents no verdict at all, found nothing (SAFE, or
	// NOT-EXERCISED).
	Held Standing = iota
	// Unclaimed: the sale found something where its design documents verdicts, but none
	// for this plan (a fault at a rate, several at once): no claim to hold it to, so it
	// passes, and the exit line counts it.
	Unclaimed
	// Outpaced: the sale did worse than its design documents, but at the machine's pace,
	// which broke a premise of the documentation (Run.Outpaced): the claim was not put
	// to the test, so it passes, with a line that says why, and the exit line counts it.
	Outpaced
	// Unfinished: the sale did not finish (its cell's "?") or its final state could not
	// be read (UNKNOWN): no verdict to hold it to.
	Unfinished
	// Worse: the sale did worse than its design documents, found damage its design
	// documents nothing of, or earned a class the policy fails on.
	Worse
)

// Fails reports whether s fails the command: the sale did worse or could not finish.
func (s Standing) Fails() bool { return s >= Unfinished }

// Policy is what the user says counts, over the designs' documentation; the zero value
// holds each sale to what its design documents.
type Policy struct {
	// FailOn are classes that fail a sale whatever its design documents (--fail-on).
	FailOn []oracle.Class
	// Expect, when set, are the only classes a sale may earn (--expect): any other, worse
	// or better, fails it, and the designs' documentation is not read.
	Expect []oracle.Class
	// Stated holds sales only to FailOn and Expect, not to what their designs document:
	// check's, whose run file's thresholds say the rest.
	Stated bool
}

// ParseClasses reads a comma-separated list of classes, as --fail-on and --expect take
// them; a word that names no class is an error that lists them.
func ParseClasses(s string) ([]oracle.Class, error) {
	var out []oracle.Class
	known := append(oracle.Classes(), oracle.ClassNotExercised)
	for w := range strings.SplitSeq(s, ",") {
		c := oracle.Class(strings.ToUpper(strings.TrimSpace(w)))
		if c == "" {
			continue
		}
		if !slices.Contains(known, c) {
			return nil, fmt.Errorf("%q is no verdict class (classes: %s)", w, classList(known))
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("name at least one class (classes: %s)", classList(known))
	}
	return out, nil
}

func classList(cs []oracle.Class) string {
	words := make([]string, len(cs))
	for i, c := range cs {
		words[i] = string(c)
	}
	return strings.Join(words, ", ")
}

// Stand judges one sale by the policy: its standing and, for any but a sale that held
// exactly as documented, why in a few words.
func (p Policy) Stand(r *Run) (Standing, string) {
	c := r.Verdict.Class
	switch {
	case !r.Complete:
		return Unfinished, "did not finish: " + or(r.Error, "cut short")
	case c == oracle.ClassUnknown || c == "":
		return Unfinished, "UNKNOWN: its final state could not be read"
	case slices.Contains(p.FailOn, c):
		return Worse, fmt.Sprintf("%s, which --fail-on names", r.Verdict.Cell())
	case len(p.Expect) > 0 && !slices.Contains(p.Expect, c):
		return Worse, fmt.Sprintf("%s, not what --expect names (%s)", r.Verdict.Cell(), classList(p.Expect))
	case len(p.Expect) > 0 || p.Stated:
		return Held, ""
	case r.Undocumented && c != oracle.ClassSafe && c != oracle.ClassNotExercised:
		return Worse, fmt.Sprintf("%s, and the design documents no verdict at all", r.Verdict.Cell())
	case len(r.Expected) == 0 && !r.Undocumented && c != oracle.ClassSafe && c != oracle.ClassNotExercised:
		// The design documents verdicts, but none for this sale's plan (a fault at a rate,
		// several at once, settings of their own): no claim to hold it to.
		return Unclaimed, fmt.Sprintf("%s, where the design documents no verdict (--fail-on or --expect judge it)", r.Verdict.Cell())
	case len(r.Expected) == 0 || slices.Contains(r.Expected, c):
		return Held, ""
	case worseThanAll(c, r.Expected):
		if why := r.Outpaced(); why != "" {
			return Outpaced, fmt.Sprintf("%s, worse than the %s it documents, but %s", r.Verdict.Cell(), classList(r.Expected), why)
		}
		return Worse, fmt.Sprintf("%s, worse than the %s it documents", r.Verdict.Cell(), classList(r.Expected))
	}
	return Held, fmt.Sprintf("%s, better than the %s it documents", r.Verdict.Cell(), classList(r.Expected))
}

// worseThanAll reports whether c is more severe than every class of want.
func worseThanAll(c oracle.Class, want []oracle.Class) bool {
	return !slices.ContainsFunc(want, func(w oracle.Class) bool { return w.Admits(c) })
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
