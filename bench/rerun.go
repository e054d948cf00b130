package bench

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/junit"
)

// RerunLines is the command that reruns each sale a person has to act on: a lone sale
// that did harm, or of many, those that failed by p or did not finish and those not as
// their design documents. Redis's version is the one the record's target ran.
func RerunLines(f *results.File, p results.Policy) []string {
	var lines []string
	for _, r := range f.Runs {
		rank, _ := r.Verdict.Class.Rank()
		s, _ := p.Stand(&r)
		act := s.Fails() || (r.AsExpected != nil && !*r.AsExpected) || (len(f.Runs) == 1 && rank > 0)
		if !act || len(r.Rerun) == 0 {
			continue
		}
		version := f.Target.Version
		if version == "" {
			version = "?"
		}
		lines = append(lines, fmt.Sprintf("rerun %s (%s, Redis %s): stockbench %s", r.Key(), r.Verdict.Cell(), version, ShellLine(r.Rerun)))
	}
	return lines
}

// ShellLine is args as one line a shell reads back into args.
func ShellLine(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellQuote(a)
	}
	return strings.Join(q, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WriteJUnit writes f's sales to path as JUnit XML (package junit), each held to p and
// to f's checks, a failure carrying the command that reruns it; nothing when path is "".
func WriteJUnit(path string, f *results.File, p results.Policy) error {
	if path == "" {
		return nil
	}
	return junit.WriteFile(path, JUnitSuite(f), Cases(f, p))
}

// Cases is f's sales judged by p and by f's checks as test cases (package junit), the
// one judgement the JUnit file and the GitHub annotations render; an incomplete run
// adds a case of its own, errored, since the sales that never ran have none.
func Cases(f *results.File, p results.Policy) []junit.Case {
	cases := junit.Sales(f, p.Stand, RerunCommand)
	if !f.Complete {
		cases = append(cases, junit.Case{ClassName: "stockbench", Name: "the run", Error: &junit.Result{
			Message: "incomplete: " + OneLine(cmp.Or(f.Incomplete, "not every sale ran")), Type: "incomplete"}})
	}
	return cases
}

// JUnitSuite names f's suite by its run, with the command line and the Redis it ran
// on as properties (a password masked, as in the record).
func JUnitSuite(f *results.File) junit.Suite {
	return junit.Suite{Name: "stockbench " + f.ID, ID: f.ID, Started: f.StartedAt, Properties: []junit.Property{
		{Name: "args", Value: ShellLine(redact.Strings(f.Args))}, {Name: "redis", Value: f.Target.String()}}}
}

// RerunCommand is the command line that reruns r alone: the one its record kept, or its
// sale's (an exploration's example); "" for a shard's sale.
func RerunCommand(r *results.Run) string {
	switch {
	case len(r.Rerun) > 0:
		return "stockbench " + ShellLine(r.Rerun)
	case r.Sale != nil:
		return "stockbench " + ShellLine(r.Sale.Args())
	}
	return ""
}
