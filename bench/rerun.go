package bench

import (
	"fmt"
	"strings"

	"github.com/stockbench/stockbench/results"
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
