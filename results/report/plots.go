package report

import (
	"fmt"
	"slices"
	"strings"
)

// Plots is which files of its plots a report writes under PlotsDir, beside report.html
// (which embeds every plot whatever it says).
type Plots string

// The choices of --plots.
const (
	PlotsPNG  Plots = "png"
	PlotsSVG  Plots = "svg"
	PlotsBoth Plots = "both"
	PlotsNone Plots = "none"
	// DefaultPlots is what report.html embeds: a reader's click on a plot opens the same
	// image.
	DefaultPlots = PlotsPNG
)

// PlotsDir is the run directory's folder of plot files, so that report.html, summary.md
// and results.json stand apart at its top.
const PlotsDir = "plots"

// ParsePlots reads a --plots value; "" is the default.
func ParsePlots(s string) (Plots, error) {
	p := Plots(strings.ToLower(strings.TrimSpace(s)))
	switch {
	case p == "":
		return DefaultPlots, nil
	case slices.Contains([]Plots{PlotsPNG, PlotsSVG, PlotsBoth, PlotsNone}, p):
		return p, nil
	}
	return "", fmt.Errorf("--plots must be png, svg, both or none, got %q", s)
}

// Formats are the file formats p writes, in the order the report links them.
func (p Plots) Formats() []string {
	switch p {
	case PlotsSVG:
		return []string{"svg"}
	case PlotsBoth:
		return []string{"png", "svg"}
	case PlotsNone:
		return nil
	}
	return []string{"png"}
}
