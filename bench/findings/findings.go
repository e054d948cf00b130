// Package findings runs an exploration (package explore) on the harness's servers and
// writes and prints what it found: explore.md, explore.json, and each finding's reruns
// as a run record with its report and timelines.
package findings

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/ghactions"
	"github.com/stockbench/stockbench/results/junit"
	"github.com/stockbench/stockbench/results/report"
)

// Record is where and how an exploration's findings are written and judged.
type Record struct {
	// Out receives the exploration's directory; Plots is which plot files its report
	// writes; Args is the command line its record keeps.
	Out, Plots string
	Args       []string
	// Policy fails a finding over what its design documents, exploring one design.
	Policy results.Policy
	// Judge, when set (a run file's thresholds), judges the findings' reruns instead.
	Judge bench.Afterword
	// JUnit, when set, is the JUnit XML file the findings' reruns and the comparison
	// go to; Append adds them as a suite to what the file holds (check's sales come
	// first) rather than writing it anew.
	JUnit  string
	Append bool
	// Format github adds GitHub Actions' annotations of the same cases, and explore.md
	// in the job's step summary; Locate says where they point (see bench.Options).
	Format bench.Format
	Locate ghactions.Locator
	// Verbose prints, on stderr, a line per sale (where its time went) and how long
	// writing the record took.
	Verbose bool
}

// Run explores cfg's designs on e's servers, each sale apart, then writes and prints
// what was found, and returns how the exploration ends, for the command to tell: 1 for
// a design significantly worse than the first, or, exploring one, for a finding its
// design does not document; 130 when interrupted.
func Run(ctx context.Context, e *bench.Env, cfg explore.Config, rec Record, stdout, stderr io.Writer) bench.Ending {
	if !e.Shared.Info.Owned {
		cfg.Parallel = 1 // no servers of a sale's own on the user's Redis
	}
	runtime.GOMAXPROCS(runtime.NumCPU()) // side by side, the sales mostly wait
	var n atomic.Int64
	cfg.Run = func(ctx context.Context, s results.Sale, _ int) (results.Run, error) {
		j, err := bench.JobOf(&s)
		if err != nil {
			return results.Run{}, fmt.Errorf("%w: %w", explore.ErrRefused, err)
		}
		return e.RunApart(ctx, j, fmt.Sprintf("{stockbench:explore:%d}", n.Add(1)))
	}
	cfg.Progress = func(line string) { fmt.Fprintln(stderr, "stockbench:", line) }
	if rec.Verbose {
		cfg.Verbose = cfg.Progress
	}
	fmt.Fprintf(stderr, "stockbench: explore %s for %s, seed %d, up to %d sales at once as the CPUs allow; Ctrl-C keeps what was found\n",
		strings.Join(DesignNames(cfg.Designs), " against "), cfg.Budget, cfg.Seed, cfg.Parallel)
	rep, err := explore.Explore(ctx, cfg)
	if err != nil {
		return bench.Told(bench.Complain(stderr, err))
	}
	began := time.Now()
	end := write(ctx, rep, e, rec, stdout, stderr)
	if rec.Verbose {
		fmt.Fprintf(stderr, "stockbench: explore: the record and its reports written in %s\n", time.Since(began).Round(time.Millisecond))
	}
	return end
}

// Limits refuses settings an exploration cannot use.
func Limits(budget time.Duration, confirm, parallel int) error {
	switch {
	case budget < 10*time.Second:
		return fmt.Errorf("explore: --budget must be at least 10s, got %s", budget)
	case confirm < 1 || confirm > 1000:
		return fmt.Errorf("explore: --confirm must be from 1 to 1000, got %d", confirm)
	case parallel < 1:
		return fmt.Errorf("explore: --parallel must be at least 1, got %d", parallel)
	}
	return nil
}

// DesignNames are the names of the designs ds sell.
func DesignNames(ds []results.Sale) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Design
	}
	return out
}

// write writes the exploration's directory (explore.md, explore.json, and each
// finding's example reruns as results.json with their report and timelines), prints
// the differences and the findings, and returns how the exploration ends (see Run).
// rec.Judge, when set (a run file's thresholds), judges the reruns instead, each
// example carrying every rerun's draw for the rates.
func write(ctx context.Context, rep *explore.Report, e *bench.Env, rec Record, stdout, stderr io.Writer) bench.Ending {
	id := results.NewID()
	out := results.NewOutput(rec.Out, id)
	file := bench.NewFile(rec.Args, id, e.Shared.Info.Record())
	file.Plots, file.StartedAt, file.FinishedAt, file.Complete = rec.Plots, rep.Started, time.Now().UTC(), rep.Complete
	if !rep.Complete {
		file.Incomplete = "interrupted: what was found until then"
	}
	code, why := bench.ExitOK, "no design is significantly worse than the first"
	if len(rep.Designs) == 1 {
		why = "every finding is one its design documents"
	}
	for _, f := range rep.Findings {
		for _, r := range f.Rates {
			if r.Example == nil {
				continue
			}
			ex := *r.Example
			ex.Draws = &r.Draws
			file.Runs = append(file.Runs, ex)
			if st, _ := rec.Policy.Stand(r.Example); st.Fails() && len(rep.Designs) == 1 {
				code, why = bench.ExitFailed, fmt.Sprintf("%s, %s: %s, which %s does not document", explore.Under(f.Faults), f.Timing, r.Example.Verdict.Cell(), r.Design)
			}
		}
	}
	if d := rep.Differences(); len(d) > 0 {
		code, why = bench.ExitFailed, fmt.Sprintf("%d significant difference(s) between the designs", len(d))
	}
	var verdict []string
	if rec.Judge != nil {
		r := rec.Judge(file)
		verdict, code, why = r.Lines, r.Code, "the findings' reruns: "+r.Why
	}
	rep.Redis = file.Target
	shell := func(s results.Sale) string { return bench.ShellLine(s.Args()) }
	file.Exploration = rep.Conclusion(shell)
	// A record of no run is none: explore.json alone says what ran.
	mkdir := func() error { return os.MkdirAll(out.Dir, 0o755) }
	if len(file.Runs) > 0 {
		mkdir = func() error { return out.Progress(file) }
	}
	if err := mkdir(); err != nil {
		return bench.Told(bench.Complain(stderr, fmt.Errorf("explore: %w", err)))
	}
	var md strings.Builder
	rep.WriteMarkdown(&md, shell)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err == nil {
		err = errors.Join(os.WriteFile(filepath.Join(out.Dir, "explore.md"), []byte(md.String()), 0o644),
			os.WriteFile(filepath.Join(out.Dir, "explore.json"), js, 0o644))
	}
	if err == nil && len(file.Runs) > 0 {
		err = report.Write(context.WithoutCancel(ctx), out, file)
	}
	if err != nil {
		return bench.Told(bench.Complain(stderr, fmt.Errorf("explore: write %s: %w", out.Dir, err)))
	}
	if err := tellCI(rec, file, rep, filepath.Join(out.Dir, "explore.md"), stdout); err != nil {
		fmt.Fprintln(stderr, "stockbench:", bench.OneLine(err.Error()))
		end := bench.Ending{Code: code, Why: why}.And(bench.Ending{Code: bench.ExitUnfinished, Why: "the JUnit file or the annotations could not be written"})
		code, why = end.Code, end.Why
	}
	printExplore(stdout, rep, shell)
	fmt.Fprintf(stdout, "\nresults: %s (explore.md", out.Dir)
	if len(file.Runs) > 0 {
		fmt.Fprint(stdout, ", report.html with each finding's timeline")
	}
	fmt.Fprintln(stdout, ")")
	for _, l := range verdict {
		fmt.Fprintln(stdout, l)
	}
	if !rep.Complete {
		code, why = bench.ExitInterrupted, "interrupted; what was found is written"
	}
	return bench.Ending{Code: code, Why: why}
}

// printExplore prints what an exploration found: the differences first.
func printExplore(w io.Writer, rep *explore.Report, shell func(results.Sale) string) {
	fmt.Fprintf(w, "\nexplored %s: %d draws, %d sales in %s (%.1f a minute), findings in %d regions\n",
		strings.Join(rep.Designs, " against "), rep.Draws, rep.Sales, rep.Elapsed.Round(time.Second), rep.SalesPerMinute, len(rep.Findings))
	fmt.Fprintln(w, "answer:", rep.Conclusion(shell).Answer)
	for _, d := range rep.Differences() {
		fmt.Fprintln(w, "DIFFERENCE", d)
	}
	for _, f := range rep.Findings {
		if !slices.ContainsFunc(f.Rates, func(r explore.Rate) bool { return r.Runs > 0 }) {
			fmt.Fprintf(w, "%s, %s: %s; not measured (the budget ended first)\n", explore.Under(f.Faults), f.Timing, strings.Join(f.Kinds(), ", "))
			continue
		}
		var kinds []string
		for _, k := range f.Kinds() {
			var rates []string
			for _, r := range f.Rates {
				if r.Runs == 0 {
					rates = append(rates, r.Design+" no rerun finished")
					continue
				}
				rates = append(rates, fmt.Sprintf("%s %d/%d", r.Design, r.Shown[k], r.Runs))
			}
			kinds = append(kinds, k+" "+strings.Join(rates, " vs "))
		}
		fmt.Fprintf(w, "%s, %s: %s\n  smallest: stockbench %s\n", explore.Under(f.Faults), f.Timing, strings.Join(kinds, "; "), shell(f.Smallest))
	}
	if q := rep.NeverStruck(); len(q) > 0 {
		fmt.Fprintf(w, "never struck: %s\n", strings.Join(slices.Clip(q), ", "))
	}
	if p := rep.Paced(); len(p) > 0 {
		fmt.Fprintf(w, "left apart, the sales' own pace (not measured): %s\n", strings.Join(p, "; "))
	}
}

// tellCI writes the exploration as CI systems read it (rec.JUnit, rec.Format): a case
// per finding's rerun, held to the policy when one design was explored (to nothing but
// finishing when several were compared, which the differences judge), and a case for the
// exploration itself, failed by each significant difference between the designs.
func tellCI(rec Record, file *results.File, rep *explore.Report, md string, stdout io.Writer) error {
	if rec.JUnit == "" && rec.Format != bench.FormatGitHub {
		return nil
	}
	stand := rec.Policy.Stand
	if len(rep.Designs) > 1 {
		stand = func(r *results.Run) (results.Standing, string) {
			if st, why := rec.Policy.Stand(r); st == results.Unfinished {
				return st, why
			}
			return results.Held, ""
		}
	}
	cases := junit.Sales(file, stand, bench.RerunCommand)
	whole := junit.Case{ClassName: "explore", Name: strings.Join(rep.Designs, " vs "), Time: junit.Seconds(rep.Elapsed)}
	if d := rep.Differences(); len(d) > 0 {
		whole.Failure = &junit.Result{Message: d[0], Type: "difference", Text: strings.Join(d, "\n")}
	}
	cases = append(cases, whole)
	if rec.Format == bench.FormatGitHub {
		if err := errors.Join(ghactions.Annotate(stdout, cases, rec.Locate), ghactions.StepSummary(md)); err != nil {
			return err
		}
	}
	if rec.JUnit == "" {
		return nil
	}
	write := junit.WriteFile
	if rec.Append {
		write = junit.AppendFile
	}
	return write(rec.JUnit, bench.JUnitSuite(file), cases)
}
