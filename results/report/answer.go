package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// htmlExploration is an exploration's answer as its report opens on it: the conclusion
// and the regions as a table whose cells show what tells the designs apart, with what
// differs significantly in each and its smallest sale.
type htmlExploration struct {
	Answer  string
	Designs []string
	Regions []htmlRegion
	Legend  string
}

type htmlRegion struct {
	// Significant is what differs significantly; "none", or that nothing was
	// measured. Differs is set when something does.
	Where, Significant, Smallest string
	Differs                      bool
	Cells                        []htmlCell
}

// explorationOf is x as the report's opening shows it; nil for a run that is no
// exploration's.
func explorationOf(x *results.Exploration) *htmlExploration {
	if x == nil {
		return nil
	}
	h := &htmlExploration{Answer: x.Answer, Designs: x.Designs,
		Legend: fmt.Sprintf("Each cell: the kind of finding whose rates tell the designs apart in that region, and how many reruns of the region's smallest sale showed it, per design (the same seeds for every design). "+
			"A difference is significant when Fisher's exact test, adjusted by Holm over the exploration's %d comparisons, is below %g. The verdicts further down are each design's worst rerun.", x.Comparisons, x.Alpha)}
	for _, g := range x.Regions {
		row := htmlRegion{Where: g.Where, Smallest: g.Smallest, Significant: g.Differs, Differs: g.Differs != ""}
		if !row.Differs {
			row.Significant = "none"
			if !slices.ContainsFunc(g.Rates, func(r string) bool { return strings.Contains(r, "/") }) {
				row.Significant = "not compared: nothing measured"
			}
		}
		for i, rate := range g.Rates {
			c := htmlCell{Text: g.Kind + " " + rate, Class: rateClass(g.Kind, rate)}
			if i < len(x.Designs) {
				c.Title = x.Designs[i]
			}
			row.Cells = append(row.Cells, c)
		}
		h.Regions = append(h.Regions, row)
	}
	return h
}

// rateClass colours a rate of a kind of finding: as the kind's class when any rerun
// showed it, SAFE when none did, grey when none was measured.
func rateClass(kind, rate string) string {
	switch {
	case !strings.Contains(rate, "/"):
		return "none"
	case strings.HasPrefix(rate, "0/"):
		return cssClass(oracle.ClassSafe)
	}
	switch k := oracle.Class(kind); k {
	case oracle.ClassOverlap, oracle.ClassBroken, oracle.ClassStuck, oracle.ClassLost, oracle.ClassDuplicated, oracle.ClassReordered:
		return cssClass(k)
	}
	return cssClass(oracle.ClassOversold) // damage to the stock or the orders
}
