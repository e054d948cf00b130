// Package repro runs the track record (internal/trackrecord): each bug's sale on the
// release that has it and, where one can be had here, on a fixed one, and says whether
// each showed what the record says.
package repro

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/host"
	"github.com/stockbench/stockbench/internal/trackrecord"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/junit"
	"github.com/stockbench/stockbench/results/report"
)

// Reader reads a `stockbench run` command line into the harness's options and the
// job it names, checked, as the command reads its own.
type Reader func(args []string) (bench.Options, []bench.Job, error)

// Config is which bugs a repro runs and where.
type Config struct {
	// Names are the bugs to run; All adds every bug of the record, Quick leaves out
	// those whose sale takes minutes.
	Names      []string
	All, Quick bool
	// Out receives the run directories; Mode is where Redis comes from, as run's
	// --redis takes it ("" for auto).
	Out, Mode string
	// Read reads each sale's command line.
	Read Reader
	// Args are the command line the record's matrix keeps.
	Args []string
	// JUnit, when set, is the file each bug's sale goes to as a JUnit test case, failed
	// when it did not show what the record says.
	JUnit string
}

// Check reads every sale cfg names as Run would, and says what is wrong with one, before
// any server starts.
func Check(cfg Config) error {
	_, err := reproSales(cfg)
	return err
}

// Run runs each sale cfg names in a run directory of its own and prints whether each
// showed what the record says, then, for more than one, the record as one matrix. It
// returns the exit code: 0 when all did, 1 when one did not, 2 for a name not in the
// record, 3 when a sale that showed it did not finish (bench.ExitRule, with the record's
// case as the sale's documented verdict).
func Run(ctx context.Context, cfg Config, stdout, stderr io.Writer) int {
	sales, err := reproSales(cfg)
	if err == nil && cfg.JUnit != "" {
		if err = junit.Writable(cfg.JUnit); err != nil {
			err = bench.UsageError(err)
		}
	}
	if err != nil {
		return bench.Complain(stderr, err)
	}
	var lines []string
	var cases []junit.Case
	started := time.Now()
	rec := record{}
	failed, unfinished := 0, bench.Ending{Code: bench.ExitOK}
	for _, s := range sales {
		fmt.Fprintf(stderr, "stockbench: repro %s (%s) on %s: want %s\n", s.entry.Name, s.entry.IssueList(), s.c.Version, s.want())
		if err := s.build(ctx, stderr); err != nil {
			return bench.Complain(stderr, err)
		}
		line, ok, got := "", false, bench.ExitOK
		var f *results.File
		tries := max(s.c.Tries, 1)
		for try := 1; try <= tries && !ok; try++ {
			if line, ok, got, f = s.run(ctx, cfg.Read, stderr); line == "" {
				return got // no record came of it (interrupted, or the servers would not start): its line is out
			}
			if ok && tries > 1 {
				line = fmt.Sprintf("%s (sale %d of up to %d)", line, try, tries)
			}
		}
		lines = append(lines, fmt.Sprintf("%s on %s: %s", s.entry.Name, s.c.Version, line))
		rec.add(s, f, line, ok)
		short := ok && got != bench.ExitOK && !s.crashes() // it showed the bug, but the sale did not finish
		switch {
		case !ok:
			failed++
		case short:
			unfinished = unfinished.And(bench.Ending{Code: got, Why: fmt.Sprintf("%s on %s showed the bug but did not finish", s.entry.Name, s.c.Version)})
		}
		cases = append(cases, s.junitCase(f, line, ok, short))
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	end := bench.Ending{Code: bench.ExitOK, Why: fmt.Sprintf("every sale of the %d showed what the record says", len(sales))}
	if failed > 0 {
		end = bench.Ending{Code: bench.ExitFailed, Why: fmt.Sprintf("%d of %d sales did not show what the record says", failed, len(sales))}
	}
	if unfinished.Code != bench.ExitOK {
		end = end.And(unfinished)
	}
	if cfg.JUnit != "" {
		if err := junit.WriteFile(cfg.JUnit, junit.Suite{Name: "stockbench repro", Started: started,
			Properties: []junit.Property{{Name: "args", Value: bench.ShellLine(cfg.Args)}}}, cases); err != nil {
			fmt.Fprintln(stderr, "stockbench:", bench.OneLine(err.Error()))
			end = end.And(bench.Ending{Code: bench.ExitUnfinished, Why: "the JUnit file could not be written"})
		}
	}
	if len(sales) > 1 {
		dir, err := rec.write(ctx, cfg.Out, cfg.Args)
		if err != nil {
			fmt.Fprintln(stderr, "stockbench: repro: write the record's matrix:", bench.OneLine(err.Error()))
			return end.And(bench.Ending{Code: bench.ExitUnfinished, Why: "the record's matrix could not be written"}).Tell(stdout)
		}
		fmt.Fprintf(stdout, "\nthe record as one matrix, a row per sale: %s\n", dir)
	}
	return end.Tell(stdout)
}

// record gathers the sales of one repro into one run record: each sale's run a row of
// its matrix, and whether it showed what the record says a check of it.
type record struct {
	first  *results.File
	runs   []results.Run
	checks []results.Check
}

func (r *record) add(s reproSale, f *results.File, line string, ok bool) {
	if f != nil && r.first == nil {
		r.first = f
	}
	if f != nil && len(f.Runs) > 0 {
		r.runs = append(r.runs, f.Runs[0])
	}
	r.checks = append(r.checks, results.Check{Run: s.entry.Name + " on " + s.c.Version, Threshold: "as the record says: " + s.want(),
		Held: ok, Why: line})
}

// junitCase is the sale as a JUnit test case: class the bug, name the release, failed
// when it did not show what the record says, errored when it showed it but did not
// finish; the text says what was wanted, what was seen, and how to rerun it.
func (s reproSale) junitCase(f *results.File, line string, ok, unfinished bool) junit.Case {
	k := junit.Case{ClassName: "repro." + s.entry.Name, Name: s.c.Version}
	text := fmt.Sprintf("want: %s\ngot: %s\nissues: %s\nrerun: stockbench repro %s\n", s.want(), line, s.entry.IssueList(), s.entry.Name)
	if f != nil && len(f.Runs) > 0 {
		r := &f.Runs[0]
		k.Time = junit.Seconds(r.Duration)
		if v := oracle.FirstViolation(&r.Oracle, r.Queue); v != "" {
			text += "first violation: " + v + "\n"
		}
	}
	switch {
	case !ok:
		k.Failure = &junit.Result{Message: line, Type: "not-reproduced", Text: text}
	case unfinished:
		k.Error = &junit.Result{Message: line, Type: "unfinished", Text: text}
	default:
		k.SystemOut = &junit.Output{Text: text}
	}
	return k
}

// write writes the record's run directory under out (results.json, summary.md,
// report.html) and returns it.
func (r *record) write(ctx context.Context, out string, args []string) (string, error) {
	if r.first == nil {
		return "", fmt.Errorf("no sale left a record")
	}
	id := results.NewID()
	f := bench.NewFile(args, id, r.first.Target)
	f.Runs, f.Checks, f.Complete, f.FinishedAt = r.runs, r.checks, true, time.Now().UTC()
	o := results.NewOutput(out, "record-"+id)
	if err := o.Progress(f); err != nil {
		return "", err
	}
	return o.Dir, report.Write(ctx, o, f)
}

// build makes what the sale runs, as its case says, in the checkout.
func (s reproSale) build(ctx context.Context, stderr io.Writer) error {
	if len(s.c.Build) == 0 {
		return nil
	}
	cmd := exec.CommandContext(ctx, "make", append([]string{"-C", s.root}, s.c.Build...)...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("repro %s: make %s: %w", s.entry.Name, strings.Join(s.c.Build, " "), err)
	}
	return nil
}

// run runs the sale once, in a run directory of its own: the line its record reads as,
// whether it showed what the record says, run's exit code, and its record. The line is
// "" when no record came of it.
func (s reproSale) run(ctx context.Context, read Reader, stderr io.Writer) (line string, ok bool, code int, file *results.File) {
	o, jobs, err := read(s.args)
	if err != nil {
		return "", false, bench.Complain(stderr, err), nil
	}
	after := func(f *results.File) bench.Reading {
		file = f
		line, ok = s.judge(f)
		if !ok {
			return bench.Reading{Lines: []string{line}, Ending: bench.Ending{Code: bench.ExitFailed, Why: line}}
		}
		return bench.Reading{Lines: []string{line}, Ending: bench.Ending{Code: bench.ExitOK, Why: line}}
	}
	// The record, not the library's documentation, says what the sale must show.
	o.Args, o.Judge = append([]string{"run"}, s.args...), after
	code = bench.Execute(ctx, o, jobs, io.Discard, stderr).Code
	return line, ok, code, file
}

// reproSale is one sale of the record: a bug's, on the release that has it or a fixed one.
type reproSale struct {
	entry trackrecord.Entry
	c     trackrecord.Case
	fixed bool
	args  []string // run's, paths made absolute, the command's own flags added
	out   string   // where its run directory goes
	root  string   // the checkout
}

// reproSales are the sales the names (or all) ask for, each checked as run checks its
// command line, so that a bad one stops the command before a server starts.
func reproSales(cfg Config) ([]reproSale, error) {
	names, all, quick, out, mode := cfg.Names, cfg.All, cfg.Quick, cfg.Out, cfg.Mode
	var picked []trackrecord.Entry
	for _, n := range names {
		e, err := trackrecord.Lookup(n)
		if err != nil {
			return nil, bench.UsageError(fmt.Errorf("repro: %w", err))
		}
		picked = append(picked, e)
	}
	for _, e := range trackrecord.All() {
		if all && (!e.Slow || !quick) {
			picked = append(picked, e)
		}
	}
	root, err := host.Checkout()
	if err != nil {
		return nil, bench.UsageError(fmt.Errorf("repro: the adapters the record runs are not here: run it in the checkout"))
	}
	extra := []string{"--out", out}
	if mode != "" {
		extra = append(extra, "--redis", mode)
	}
	var sales []reproSale
	for _, e := range picked {
		cases := []trackrecord.Case{e.Buggy}
		if e.Fixed != nil {
			cases = append(cases, *e.Fixed)
		}
		for i, c := range cases {
			s := reproSale{entry: e, c: c, fixed: i == 1, args: append(fromRoot(root, c.Args), extra...), out: out, root: root}
			if _, _, err := cfg.Read(s.args); err != nil {
				return nil, bench.UsageError(fmt.Errorf("repro %s: %w", e.Name, err))
			}
			sales = append(sales, s)
		}
	}
	return sales, nil
}

func (s reproSale) crashes() bool { return s.c.Crash != "" && !s.fixed }

// want says what the sale must show.
func (s reproSale) want() string {
	switch {
	case s.crashes():
		return fmt.Sprintf("the sale to end incomplete with %q", s.c.Crash)
	case s.fixed:
		return fmt.Sprintf("SAFE, no %s", s.entry.Buggy.Finding)
	}
	return s.c.Finding
}

// judge reads the sale's record: the line to print, and whether it showed what the
// record says.
func (s reproSale) judge(f *results.File) (string, bool) {
	if len(f.Runs) == 0 {
		return "NOT reproduced: the sale left no record (" + f.Incomplete + ")", false
	}
	r := f.Runs[0]
	seen := fmt.Sprintf("%s (%s), in %s", r.Verdict.Cell(), r.Verdict, filepath.Join(s.out, f.ID))
	if s.crashes() {
		if !f.Complete && strings.Contains(f.Incomplete, s.c.Crash) {
			return "reproduced: incomplete, " + f.Incomplete, true
		}
		return fmt.Sprintf("NOT reproduced: want the sale to end with %q, got %s", s.c.Crash, seen), false
	}
	found := false
	for _, finding := range r.Verdict.Findings {
		found = found || strings.HasPrefix(finding, s.entry.Buggy.Finding)
	}
	switch {
	case !f.Complete:
		return "NOT judged: the sale did not finish (" + f.Incomplete + "), " + seen, false
	case s.fixed && (found || r.Verdict.Class != oracle.ClassSafe):
		return "NOT fixed: " + seen, false
	case s.fixed:
		return "passes: " + seen, true
	case found && s.c.Redelivered > 0 && (r.Recovery == nil || r.Recovery.Redelivered != s.c.Redelivered):
		return fmt.Sprintf("NOT reproduced: want %d dead workers' tasks back, the control, got %+v, %s", s.c.Redelivered, r.Recovery, seen), false
	case found && s.c.Redelivered > 0:
		return fmt.Sprintf("reproduced: %s; %d of %d dead workers' tasks came back", seen, r.Recovery.Redelivered, r.Recovery.Deaths), true
	case found:
		return "reproduced: " + seen, true
	}
	return "NOT reproduced: " + seen, false
}

// fromRoot makes the paths of the shipped adapters in args (adapters/..., and the Go
// ones built into bin/adapters/...) absolute, from the checkout's root, so that the
// record runs from wherever the command does.
func fromRoot(root string, args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		fields := strings.Fields(a)
		changed := false
		for j, f := range fields {
			for _, dir := range []string{"adapters/", "bin/adapters/"} {
				if k := strings.Index(f, dir); k >= 0 && (k == 0 || f[k-1] == '=') {
					fields[j], changed = f[:k]+filepath.Join(root, f[k:]), true
					break
				}
			}
		}
		if changed {
			a = strings.Join(fields, " ")
		}
		out[i] = a
	}
	return out
}

// List writes the track record, fitted to a terminal of columns (0: any width): each
// bug, where it was reported, the library and its fixed release here.
func List(w io.Writer, columns int) {
	t := report.Table{Heads: []string{"BUG", "ISSUES", "LIBRARY", "FIXED RELEASE HERE"}, Title: 1}
	for _, e := range trackrecord.All() {
		fixed := "none"
		if e.Fixed != nil {
			fixed = e.Fixed.Version
		}
		t.Rows = append(t.Rows, []string{e.Name, e.IssueList(), e.Library, fixed})
	}
	t.Fit(w, columns)
	fmt.Fprintln(w, "\nstockbench repro NAME runs one; --all every one (--quick leaves out those that take minutes).")
}
