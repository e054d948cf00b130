// Package ghactions writes a judged run as GitHub Actions reads it: an error annotation
// per sale that failed or could not finish, a notice per fault that never struck, and
// the run's summary.md in the job's step summary.
//
// It renders the cases package junit judged, so that a sale fails the same way in the
// JUnit file, in the annotations and in the exit status.
package ghactions

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/stockbench/stockbench/results/junit"
)

// A Locator says where in the repository an annotation of case c points: a file, as
// the workflow's workspace names it, and a line of it (0: the file alone). An empty file
// points nowhere.
type Locator func(c junit.Case) (file string, line int)

// Annotate writes a workflow command per case that did not pass: ::error for a failure
// or an error, ::notice for a skip. at, when set, says where each points (check's run
// file, at the thresholds a sale broke), so that it shows there in a pull request.
func Annotate(w io.Writer, cases []junit.Case, at Locator) error {
	for _, c := range cases {
		level, r := "", (*junit.Result)(nil)
		switch {
		case c.Failure != nil:
			level, r = "error", c.Failure
		case c.Error != nil:
			level, r = "error", c.Error
		case c.Skipped != nil:
			level, r = "notice", c.Skipped
		default:
			continue
		}
		props := "title=" + property("stockbench "+c.ClassName+" "+c.Name)
		if at != nil {
			if file, line := at(c); file != "" && line > 0 {
				props = fmt.Sprintf("file=%s,line=%d,%s", property(file), line, props)
			} else if file != "" {
				props = "file=" + property(file) + "," + props
			}
		}
		msg := r.Message
		if r.Text != "" {
			msg += "\n" + strings.TrimRight(r.Text, "\n")
		}
		if _, err := fmt.Fprintf(w, "::%s %s::%s\n", level, props, data(msg)); err != nil {
			return err
		}
	}
	return nil
}

// StepSummary appends the markdown at summary (a run's summary.md) to the job's step
// summary, the file $GITHUB_STEP_SUMMARY names; nothing outside a job.
func StepSummary(summary string) error {
	dst := os.Getenv("GITHUB_STEP_SUMMARY")
	if dst == "" {
		return nil
	}
	b, err := os.ReadFile(summary)
	if err != nil {
		return fmt.Errorf("step summary: %w", err)
	}
	f, err := os.OpenFile(dst, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("step summary: %w", err)
	}
	if _, err = f.Write(append(b, '\n')); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		return fmt.Errorf("step summary: %w", err)
	}
	return nil
}

// data escapes a workflow command's message, as the runner's toolkit does.
func data(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// property escapes a workflow command's property value: a message's escapes, and the
// separators of properties.
func property(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
