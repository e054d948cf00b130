package bench

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// ExitRule is the exit status rule of every command that runs sales, as --help and
// docs/running.md state it.
const ExitRule = `Exit status, the same for every command that runs sales:
  0    every sale earned a class its design documents for its fault plan (or better),
       or its design documents none for that plan, or none at all and it found nothing
       (SAFE, NOT-EXERCISED), or it did worse only at the machine's pace (OUTPACED lines)
  1    a sale did worse than its design documents, found anything while its design
       documents nothing at all, or earned a class --fail-on names (or one --expect
       does not)
  2    bad input, an unreachable or wrong server, a misbehaving adapter: nothing ran
  3    a sale could not finish (a "?" cell) or its final state could not be read
       (UNKNOWN); what it measured is written, marked incomplete
  130  interrupted; what ran is written, marked incomplete
When sales differ, 130 outranks 1, and 1 outranks 3.`

// worstFirst ranks exit codes: the code of two outcomes taken together is the one that
// comes first here.
var worstFirst = []int{ExitInterrupted, ExitUsage, ExitFailed, ExitUnfinished, ExitOK}

// Worst is the exit code of two outcomes taken together (see ExitRule): interrupted
// before bad input before a failed sale before an unfinished one before success.
func Worst(a, b int) int {
	ia, ib := slices.Index(worstFirst, a), slices.Index(worstFirst, b)
	switch {
	case ia < 0:
		return a // an unranked code is a failure of its own kind: keep it
	case ib < 0 || ib < ia:
		return b
	}
	return a
}

// Judge is the Afterword that sets a run's exit status by ExitRule: it holds each sale
// to p (by default, to what its design documents) and returns a line for each sale that
// failed or could not finish, and the exit status with its reason.
func Judge(p results.Policy) Afterword {
	return func(f *results.File) Reading {
		var lines []string
		worse, unfinished, unclaimed, outpaced := 0, 0, 0, 0
		passed := map[oracle.Class]int{} // findings that held because they are documented
		for i := range f.Runs {
			r := &f.Runs[i]
			s, why := p.Stand(r)
			switch s {
			case results.Worse:
				worse++
				lines = append(lines, fmt.Sprintf("FAIL %s: %s", r.Key(), why))
			case results.Unfinished:
				unfinished++
				lines = append(lines, fmt.Sprintf("UNFINISHED %s: %s", r.Key(), why))
			case results.Unclaimed:
				unclaimed++
			case results.Outpaced:
				outpaced++
				lines = append(lines, fmt.Sprintf("OUTPACED %s: %s", r.Key(), why))
			default:
				if rank, _ := r.Verdict.Class.Rank(); rank > 0 {
					passed[r.Verdict.Class]++
				}
			}
		}
		end := func(code int, why string) Reading { return Reading{Lines: lines, Ending: Ending{Code: code, Why: why}} }
		n := len(f.Runs)
		switch {
		case worse > 0:
			return end(ExitFailed, fmt.Sprintf("%d of %d sales failed (see above)", worse, n))
		case !f.Complete && f.Incomplete != "":
			return end(ExitUnfinished, "the run is incomplete: "+f.Incomplete)
		case unfinished > 0:
			return end(ExitUnfinished, fmt.Sprintf("%d of %d sales could not finish or be judged", unfinished, n))
		}
		why := "every sale earned a class its design documents, or found nothing"
		switch {
		case len(p.Expect) > 0:
			why = "every sale earned a class --expect names"
		case p.Stated:
			why = "no sale earned a class fail_on names or expect leaves out"
		}
		if len(passed) > 0 && len(p.Expect) == 0 && !p.Stated {
			var cs []string
			for _, c := range slices.Sorted(maps.Keys(passed)) {
				cs = append(cs, fmt.Sprintf("%s %d", c, passed[c]))
			}
			why += fmt.Sprintf(" (documented findings held: %s; --fail-on CLASS or --expect SAFE fails on them)", strings.Join(cs, ", "))
		}
		if unclaimed > 0 {
			why += fmt.Sprintf("; %d with findings where their designs document no verdict (a fault at a rate, several at once, settings of its own): --fail-on or --expect judge them", unclaimed)
		}
		if outpaced > 0 {
			why = strings.Replace(why, "every sale earned", fmt.Sprintf("every sale but %d earned", outpaced), 1)
			why += fmt.Sprintf("; %d did worse only at the machine's pace, so did not put its design's claim to the test (see OUTPACED above)", outpaced)
		}
		return end(ExitOK, why)
	}
}
