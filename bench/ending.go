package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/stockbench/stockbench/results"
)

// An Ending is how a command ends: the exit status it returns and why. Every command's
// last line tells both (Tell), "exit 1: 2 of 12 thresholds broken", so that a person or
// a CI log reads the status and its reason in one place, and no earlier line says
// another.
type Ending struct {
	Code int
	Why  string
	// Told is set when the line is printed already: Complain's, on stderr, is the one
	// line of a command refused or stopped by an error.
	Told bool
}

// Line is the ending's last line.
func (e Ending) Line() string { return fmt.Sprintf("exit %d: %s", e.Code, e.Why) }

// Tell prints the ending's line on w, unless it was told already, and returns its code.
func (e Ending) Tell(w io.Writer) int {
	if !e.Told {
		fmt.Fprintln(w, e.Line())
	}
	return e.Code
}

// And is the ending of two outcomes taken together: the worse code (Worst) with its
// reason; both reasons when the codes are the same.
func (e Ending) And(o Ending) Ending {
	switch w := Worst(e.Code, o.Code); {
	case e.Code != o.Code && w == o.Code:
		return o
	case e.Code != o.Code:
		return e
	}
	if o.Why != "" && o.Why != e.Why && !strings.Contains(e.Why, o.Why) {
		e.Why = strings.TrimPrefix(e.Why+"; "+o.Why, "; ")
	}
	e.Told = e.Told && o.Told
	return e
}

// Exit prints the line of the ending code for why on w and returns code: a command's
// last line.
func Exit(w io.Writer, code int, why string) int { return Ending{Code: code, Why: why}.Tell(w) }

// Told is the ending of a command whose line is out already: Complain's.
func Told(code int) Ending { return Ending{Code: code, Told: true} }

// Reading is what an Afterword reads in a finished run: the lines it prints (a failed
// sale's, a broken threshold's), and how the run ends by it.
type Reading struct {
	Lines []string
	Ending
}

// Afterword reads a finished run for a verdict of its own (check's thresholds, replay's
// tally), which may add to the file before it is written.
type Afterword func(f *results.File) Reading

// Also is an Afterword that runs a, then b: their lines in that order, and their
// endings taken together (Ending.And).
func Also(a, b Afterword) Afterword {
	return func(f *results.File) Reading {
		ra, rb := a(f), b(f)
		return Reading{Lines: append(ra.Lines, rb.Lines...), Ending: ra.Ending.And(rb.Ending)}
	}
}
