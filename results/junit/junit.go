// Package junit writes a run's sales as JUnit XML, the test report every CI system reads:
// one test case per sale, failed, errored or skipped as the command judged it.
//
// A sale's test case has the class name "scenario.design" and the name of its fault
// plan. It fails when the sale did worse than documented (or than the policy allows) or
// broke one of check's thresholds or regressed from its baseline; it errors when it could
// not finish or its state could not be read; it is skipped when its faults never struck
// and nothing else was found. A failure's text carries the verdict with its findings, the
// first violation's one line of timeline, and the command that reruns the sale.
package junit

import (
	"cmp"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Case is one test case: a sale, or a check that names no sale (repro's "as the record
// says").
type Case struct {
	XMLName   xml.Name `xml:"testcase"`
	ClassName string   `xml:"classname,attr"`
	Name      string   `xml:"name,attr"`
	Time      Seconds  `xml:"time,attr"`
	Failure   *Result  `xml:"failure,omitempty"`
	Error     *Result  `xml:"error,omitempty"`
	Skipped   *Result  `xml:"skipped,omitempty"`
	SystemOut *Output  `xml:"system-out,omitempty"`
	// Selectors are the keys of the run file's thresholds the case broke, first broken
	// first, for an annotation to point at; not written.
	Selectors []string `xml:"-"`
}

// Result is a case's failure, error or skip: a one-line message, its kind (a verdict
// class), and the text a person acts on.
type Result struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

// Seconds is a duration as JUnit writes it: seconds, to the millisecond.
type Seconds time.Duration

func (s Seconds) MarshalText() ([]byte, error) {
	return fmt.Appendf(nil, "%.3f", time.Duration(s).Seconds()), nil
}

func (s *Seconds) UnmarshalText(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	*s = Seconds(f * float64(time.Second))
	return err
}

// Output is what a case that passed says of itself: its verdict and rerun command.
type Output struct {
	Text string `xml:",cdata"`
}

// Stand is how the command judges a sale (results.Policy.Stand).
type Stand func(*results.Run) (results.Standing, string)

// Sales is a case per sale of f, judged by stand and by f's checks: a check names its
// sale by key (check's thresholds), or starts its line with it (a baseline's
// regressions). Checks that name no sale become cases of their own. rerun is the command
// line that reruns a sale ("" to leave it out).
func Sales(f *results.File, stand Stand, rerun func(*results.Run) string) []Case {
	var cases []Case
	used := make([]bool, len(f.Checks))
	for i := range f.Runs {
		r := &f.Runs[i]
		key := r.Key()
		var broken, selectors []string
		for j, c := range f.Checks {
			if c.Run == key || strings.HasPrefix(c.Threshold, key+": ") {
				used[j] = true
				if !c.Held {
					broken, selectors = append(broken, c.String()), append(selectors, c.Selector)
				}
			}
		}
		k := sale(r, stand, broken, rerun(r))
		k.Selectors = selectors
		cases = append(cases, k)
	}
	var rest []results.Check
	for j, c := range f.Checks {
		if !used[j] {
			rest = append(rest, c)
		}
	}
	return append(cases, Checks(rest)...)
}

// Checks is a case per check: failed when it did not hold. Repro's record is judged so,
// each bug's sale held to what the track record says it shows.
func Checks(checks []results.Check) []Case {
	cases := make([]Case, 0, len(checks))
	for _, c := range checks {
		k := Case{ClassName: "stockbench.check", Name: c.Run}
		if !c.Held {
			k.Failure = &Result{Message: oneLine(c.String()), Type: "check", Text: c.String()}
			k.Selectors = []string{c.Selector}
		}
		cases = append(cases, k)
	}
	return cases
}

// sale is r's case: broken are the lines of the checks it broke.
func sale(r *results.Run, stand Stand, broken []string, rerun string) Case {
	k := Case{ClassName: r.Subject() + "." + r.Impl, Name: r.FaultPlan(), Time: Seconds(r.Duration)}
	st, why := stand(r)
	var text strings.Builder
	fmt.Fprintf(&text, "verdict: %s\n", r.Verdict)
	for _, f := range r.Verdict.Findings {
		fmt.Fprintf(&text, "finding: %s\n", f)
	}
	if len(r.Expected) > 0 {
		fmt.Fprintf(&text, "documented: %s\n", classes(r.Expected))
	}
	if line := oracle.FirstViolation(&r.Oracle, r.Queue); line != "" {
		fmt.Fprintf(&text, "first violation: %s\n", line)
	}
	for _, b := range broken {
		fmt.Fprintf(&text, "broken: %s\n", b)
	}
	if r.Error != "" {
		fmt.Fprintf(&text, "error: %s\n", r.Error)
	}
	if rerun != "" {
		fmt.Fprintf(&text, "rerun: %s\n", rerun)
	}
	switch {
	case st == results.Worse:
		k.Failure = &Result{Message: oneLine(why), Type: string(r.Verdict.Class), Text: text.String()}
	case len(broken) > 0:
		k.Failure = &Result{Message: oneLine(broken[0]), Type: "threshold", Text: text.String()}
	case st == results.Unfinished || !r.Complete:
		k.Error = &Result{Message: oneLine(cmp.Or(why, r.Error, "the sale did not finish")), Type: string(r.Verdict.Class), Text: text.String()}
	case st == results.Outpaced:
		k.Skipped = &Result{Message: oneLine("outpaced, not put to the test: " + why)}
	case r.Verdict.Class == oracle.ClassNotExercised:
		k.Skipped = &Result{Message: "not exercised: " + strings.Join(r.NotExercised, ", ") + " never struck"}
	default:
		k.SystemOut = &Output{text.String()}
	}
	return k
}

// Suite is a suite of cases: its name, the run's id, when it started, and what a
// person rerunning it needs (the command line, the Redis it ran on) as properties.
type Suite struct {
	Name       string
	ID         string
	Started    time.Time
	Properties []Property
}

// Property is a name and its value, shown with a suite.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type suites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	counts
	Suites []suite `xml:"testsuite"`
}

type suite struct {
	Name      string `xml:"name,attr"`
	ID        string `xml:"id,attr,omitempty"`
	Timestamp string `xml:"timestamp,attr,omitempty"`
	counts
	Properties []Property `xml:"properties>property,omitempty"`
	Cases      []Case     `xml:"testcase"`
}

type counts struct {
	Tests    int     `xml:"tests,attr"`
	Failures int     `xml:"failures,attr"`
	Errors   int     `xml:"errors,attr"`
	Skipped  int     `xml:"skipped,attr"`
	Time     Seconds `xml:"time,attr"`
}

// Write writes cases as one suite of a JUnit XML document.
func Write(w io.Writer, s Suite, cases []Case) error {
	return write(w, suites{Name: "stockbench", Suites: []suite{newSuite(s, cases)}})
}

func newSuite(s Suite, cases []Case) suite {
	out := suite{Name: s.Name, ID: s.ID, Properties: s.Properties, Cases: cases}
	for _, c := range cases {
		out.add(c)
	}
	if !s.Started.IsZero() {
		out.Timestamp = s.Started.UTC().Format("2006-01-02T15:04:05")
	}
	return out
}

func (n *counts) add(c Case) {
	n.Tests++
	n.Time += c.Time
	switch {
	case c.Failure != nil:
		n.Failures++
	case c.Error != nil:
		n.Errors++
	case c.Skipped != nil:
		n.Skipped++
	}
}

func write(w io.Writer, doc suites) error {
	doc.counts = counts{}
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			doc.add(c)
		}
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	e := xml.NewEncoder(w)
	e.Indent("", "  ")
	if err := e.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// WriteFile writes cases to path as one suite, whole or not at all (a temporary file
// renamed).
func WriteFile(path string, s Suite, cases []Case) error {
	return replace(path, suites{Name: "stockbench", Suites: []suite{newSuite(s, cases)}})
}

// AppendFile adds cases to the JUnit file at path as a suite of their own (check's
// exploration after its sales), or writes it anew when there is none.
func AppendFile(path string, s Suite, cases []Case) error {
	var doc suites
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		doc.Name = "stockbench"
	case err != nil:
		return fmt.Errorf("junit: read %s: %w", path, err)
	default:
		if err := xml.Unmarshal(b, &doc); err != nil {
			return fmt.Errorf("junit: read %s: %w", path, err)
		}
	}
	doc.Suites = append(doc.Suites, newSuite(s, cases))
	return replace(path, doc)
}

func replace(path string, doc suites) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".junit-*.xml")
	if err != nil {
		return fmt.Errorf("junit: write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp, doc); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("junit: write %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("junit: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("junit: write %s: %w", path, err)
	}
	return nil
}

// Writable reports why path cannot take a JUnit file, before anything runs: its
// directory must exist, and the path must not be a directory.
func Writable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("--junit %s: a directory, not a file", path)
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return fmt.Errorf("--junit %s: no directory %s to write it in", path, filepath.Dir(path))
	}
	return nil
}

func classes(cs []oracle.Class) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, " or ")
}

func oneLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
