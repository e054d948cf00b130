package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// Table is rows of cells under their heads, laid out for a terminal: aligned columns when
// they fit its width, else one record per row that wraps within it.
type Table struct {
	Heads []string
	Rows  [][]string
	// Title is how many leading cells name a row in a record, on its first line (at least
	// one); Plain is how many cells after them a record writes on lines of their own
	// without their heads (a description); the rest go as "HEAD: value" pairs.
	Title, Plain int
	// Caption, when set, is a line written above the records, saying what the aligned
	// table's heads would.
	Caption string
}

// recordIndent is how far a record's lines under its title are indented.
const recordIndent = 4

// Fit writes t aligned when its widest line fits width columns, or width is 0 (no
// terminal: a pipe or a log keeps every row on one line), and as records otherwise.
func (t Table) Fit(w io.Writer, width int) error {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range append([][]string{t.Heads}, t.Rows...) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	if width <= 0 || widest(b.String()) <= width {
		_, err := w.Write(b.Bytes())
		return err
	}
	b.Reset()
	if t.Caption != "" {
		fmt.Fprintln(&b, t.Caption)
	}
	title := max(t.Title, 1)
	for _, row := range t.Rows {
		fmt.Fprintln(&b, strings.TrimRight(strings.Join(row[:min(title, len(row))], "  "), " "))
		var pairs []string
		for i := title; i < len(row); i++ {
			switch {
			case row[i] == "":
			case i < title+t.Plain:
				for _, l := range Wrap(row[i], width-recordIndent) {
					fmt.Fprintf(&b, "%*s%s\n", recordIndent, "", l)
				}
			default:
				pairs = append(pairs, t.Heads[i]+": "+row[i])
			}
		}
		for _, l := range pack(pairs, width-recordIndent) {
			fmt.Fprintf(&b, "%*s%s\n", recordIndent, "", l)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// widest is the length in runes of the longest line of s.
func widest(s string) int {
	n := 0
	for l := range strings.SplitSeq(s, "\n") {
		n = max(n, utf8.RuneCountInString(strings.TrimRight(l, " ")))
	}
	return n
}

// Wrap breaks s into lines of at most width runes at spaces; a word longer than a line
// stands alone on one.
func Wrap(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// pack lays items side by side, three spaces apart, in lines of at most width runes; an
// item longer than a line is wrapped on lines of its own.
func pack(items []string, width int) []string {
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case utf8.RuneCountInString(it) > width:
			if line != "" {
				lines, line = append(lines, line), ""
			}
			lines = append(lines, Wrap(it, width)...)
		case line == "":
			line = it
		case utf8.RuneCountInString(line)+3+utf8.RuneCountInString(it) <= width:
			line += "   " + it
		default:
			lines, line = append(lines, line), it
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}
