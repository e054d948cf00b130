package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/ghactions"
	"github.com/stockbench/stockbench/results/junit"
	"github.com/stockbench/stockbench/results/live"
	"github.com/stockbench/stockbench/results/report"
	"github.com/stockbench/stockbench/scenarios"
)

// Execute starts the servers, runs the jobs and writes the run directory after each
// one, and returns how the run ends, for the command to tell on its last line (the
// lines before it, a failed sale's, are out). Ctrl-C (ctx's end) or a failing run stops
// the sequence; what ran is still written, marked incomplete, and the servers are
// stopped either way. What can be checked before a server starts is: the output
// directory, and whether the sales fit in this machine. o.After, when set, reads what
// ran before the run directory is written for the last time.
func Execute(ctx context.Context, o Options, jobs []Job, stdout, stderr io.Writer) Ending {
	if err := o.check(jobs); err != nil {
		return Told(Complain(stderr, UsageError(err)))
	}
	o.printNotes(stderr)
	most := 0
	for _, j := range jobs {
		most = max(most, j.buyers())
	}
	LimitMemory(most)
	id := results.NewID()
	board, unserve, err := serveBoard(o, id, jobs, stderr)
	if err != nil {
		return Told(Complain(stderr, UsageError(err)))
	}
	defer unserve()
	e, code := Start(ctx, o, stderr)
	if e == nil {
		return Told(code)
	}
	defer e.Stop(stderr)

	out := results.NewOutput(o.out(), id)
	file := NewFile(o.Args, id, e.Shared.Info.Record())
	file.Plots = o.Plots
	code = e.runAll(ctx, jobs, o, board, out, file, stderr)
	if len(file.Runs) == 0 && code == ExitInterrupted {
		return Told(Abort(stderr, code, "interrupted before the first sale ended; nothing was written"))
	}
	file.Complete = file.Incomplete == "" && len(file.Runs) == len(jobs)
	file.FinishedAt = time.Now().UTC()
	reading := o.judge()(file)
	end := reading.Ending
	if Worst(code, end.Code) != end.Code {
		// The run's own end outranks the judge's reading (Ctrl-C over an incomplete run).
		end = Ending{Code: code, Why: cmp.Or(file.Incomplete, "the run did not finish")}
	}
	if err := out.Progress(file); err != nil {
		fmt.Fprintln(stderr, "stockbench: write results:", OneLine(err.Error()))
		return end.And(Ending{Code: ExitUnfinished, Why: "results.json could not be written"})
	}
	end = end.And(o.record(ctx, out, file, board, stdout, stderr))
	fmt.Fprintln(stdout)
	for _, l := range reading.Lines {
		fmt.Fprintln(stdout, l)
	}
	return end
}

// check refuses what can be refused before a server starts: options out of range, an
// output directory or JUnit file that cannot be written, sales that do not fit in this
// machine.
func (o Options) check(jobs []Job) error {
	if err := Writable(o.out()); err != nil {
		return err
	}
	if o.JUnit != "" {
		if err := junit.Writable(o.JUnit); err != nil {
			return err
		}
	}
	if err := fits(jobs, !o.External()); err != nil {
		return err
	}
	if o.Runs < 0 || o.Runs > MaxRuns {
		return fmt.Errorf("--runs must be from 1 to %d, got %d", MaxRuns, o.Runs)
	}
	if o.Repeat < 0 || o.Repeat > MaxRepeat {
		return fmt.Errorf("--repeat must be from 1 to %d, got %d", MaxRepeat, o.Repeat)
	}
	return nil
}

// printNotes says, once each, what the command leaves out of the run.
func (o Options) printNotes(stderr io.Writer) {
	noted := map[string]bool{}
	for _, n := range o.Notes {
		if !noted[n] {
			noted[n] = true
			fmt.Fprintln(stderr, "stockbench: skipped:", n)
		}
	}
}

// judge is the Afterword that reads the finished run: o.Judge, or the rule of every
// command that runs sales (ExitRule), after o.After's own.
func (o Options) judge() Afterword {
	judge := o.Judge
	if judge == nil {
		judge = Judge(o.Policy)
	}
	if o.After != nil {
		judge = Also(o.After, judge)
	}
	return judge
}

// record writes what the finished run is told by besides results.json: the JUnit file,
// the live page, the report, GitHub's annotations; and prints the verdict table, the
// rerun lines and where the results are. It returns how writing them ended: a file that
// could not be written leaves the run unfinished.
func (o Options) record(ctx context.Context, out *results.Output, file *results.File, board *live.Board, stdout, stderr io.Writer) Ending {
	end := Ending{Code: ExitOK}
	failed := func(what string, err error) {
		fmt.Fprintln(stderr, "stockbench:", OneLine(err.Error()))
		end = end.And(Ending{Code: ExitUnfinished, Why: what + " could not be written"})
	}
	if err := WriteJUnit(o.JUnit, file, o.Policy); err != nil {
		failed("the JUnit file", err)
	}
	if board != nil {
		board.Finish(file.Incomplete)
		if err := board.Save(filepath.Join(out.Dir, "dashboard.html")); err != nil {
			failed("the live page", err)
		}
	}
	fmt.Fprintln(stdout)
	report.WriteReport(stdout, file.Runs, o.Width)
	if lines := RerunLines(file, o.Policy); len(lines) > 0 {
		fmt.Fprintln(stdout)
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
	}
	if !file.Complete {
		fmt.Fprintf(stdout, "\nINCOMPLETE: %s\n", file.Incomplete)
		fmt.Fprintln(stderr, "stockbench: incomplete:", file.Incomplete)
	}
	fmt.Fprintf(stdout, "\nresults: %s\n", out.Dir)
	runtime.GOMAXPROCS(runtime.NumCPU()) // the sales are over: the plots may take every CPU
	end = end.And(WriteReport(ctx, out, file, stderr))
	if o.Format == FormatGitHub {
		if err := errors.Join(ghactions.Annotate(stdout, Cases(file, o.Policy), o.Locate), ghactions.StepSummary(filepath.Join(out.Dir, "summary.md"))); err != nil {
			failed("GitHub's annotations or step summary", err)
		}
	}
	return end
}

// serveBoard serves the run's live page on o.Dashboard, when set, before anything
// starts: an address that cannot be had is the user's error, and nothing is created.
// unserve stops serving; the board is nil without a dashboard.
func serveBoard(o Options, id string, jobs []Job, stderr io.Writer) (board *live.Board, unserve func(), err error) {
	if o.Dashboard == "" {
		return nil, func() {}, nil
	}
	l, err := live.Listen(o.Dashboard)
	if err != nil {
		return nil, nil, err
	}
	sales := make([]live.Sale, len(jobs))
	for i, j := range jobs {
		sales[i] = j.label()
	}
	board = live.NewBoard(id, strings.Join(redact.Strings(o.Args), " "), sales)
	fmt.Fprintf(stderr, "stockbench: dashboard at http://%s/ (OpenMetrics at /metrics)\n", l.Addr())
	return board, board.Serve(l), nil
}

// WriteReport writes the run's report beside its results.json and returns how that
// ended. A run cut short still gets the report of what it measured; Ctrl-C while the
// report is written stops it (results.json is whole by then), and a report that fails
// loses nothing but itself.
func WriteReport(ctx context.Context, out *results.Output, file *results.File, stderr io.Writer) Ending {
	rctx := ctx
	if ctx.Err() != nil {
		rctx = context.WithoutCancel(ctx)
	}
	fmt.Fprintln(stderr, "stockbench: writing the report in", out.Dir)
	err := report.Write(rctx, out, file)
	switch {
	case err == nil:
		return Ending{Code: ExitOK}
	case rctx.Err() != nil:
		fmt.Fprintf(stderr, "stockbench: interrupted while writing the report; results.json is whole (stockbench report %s writes the rest)\n", out.Dir)
		return Ending{Code: ExitInterrupted, Why: "interrupted while the report was written; results.json is whole"}
	}
	fmt.Fprintf(stderr, "stockbench: report: %s; results.json is whole\n", OneLine(err.Error()))
	return Ending{Code: ExitUnfinished, Why: "the report could not be written; results.json is whole"}
}

// Env is the servers a run uses: the shared server and a pool for the servers some sales
// need beside it.
type Env struct {
	*rig.Harness
	// again is a job as a value, recorded with its run.
	again func(Job) *results.Sale
}

// Start starts the shared server and the pool, and runs o.Prepare on it; on failure it
// says why on stderr and returns the exit code. Stop stops what it started.
func Start(ctx context.Context, o Options, stderr io.Writer) (*Env, int) {
	if o.Procs < 0 {
		return nil, Complain(stderr, UsageError(fmt.Errorf("--procs must not be negative, got %d", o.Procs)))
	}
	provider, err := o.Redis.Provider()
	if err != nil {
		return nil, Complain(stderr, UsageError(fmt.Errorf("--redis, --redis-url: %w", err)))
	}
	interrupted := func() (*Env, int) {
		return nil, Abort(stderr, ExitInterrupted, "interrupted before the run began; nothing ran")
	}
	h, err := rig.StartHarness(ctx, provider, o.Redis)
	var none *rig.NoServerError
	switch {
	case err != nil && ctx.Err() != nil:
		return interrupted()
	case errors.As(err, &none):
		return nil, Complain(stderr, UsageError(fmt.Errorf("redis: %w", none.Err)))
	case err != nil:
		return nil, Complain(stderr, err)
	}
	fmt.Fprintln(stderr, "stockbench: redis:", h.Shared.Info.Record())
	if n := useProcs(o.Procs, h.Shared.Info.Owned); n < runtime.NumCPU() {
		fmt.Fprintf(stderr, "stockbench: buyers run on %d of %d CPUs, leaving the rest to Redis (--procs to change)\n", n, runtime.NumCPU())
	}
	e := &Env{Harness: h, again: o.Sale}
	if err := e.prepare(ctx, o.Prepare); err != nil {
		e.Stop(stderr)
		return nil, Complain(stderr, UsageError(err))
	}
	return e, ExitOK
}

// useProcs sets how many CPUs the buyers' goroutines run on and returns it: n when set,
// else GOMAXPROCS from the environment, else all but one when Redis runs on this
// machine. Redis runs its commands on one thread; a driver that takes every CPU makes it
// wait for one: on two CPUs the driver took 1.1 cores and Redis 0.8. With one CPU left
// to Redis the lua sale went from 0.8 to 1.0 of redis-benchmark (single-threaded too).
func useProcs(n int, redisHere bool) int {
	switch {
	case n > 0:
		runtime.GOMAXPROCS(n)
	case os.Getenv("GOMAXPROCS") != "":
	case redisHere:
		runtime.GOMAXPROCS(max(1, runtime.NumCPU()-1))
	}
	return runtime.GOMAXPROCS(0)
}

// prepare runs fn on a client of the shared server, before anything is written.
func (e *Env) prepare(ctx context.Context, fn func(context.Context, redis.UniversalClient) error) error {
	if fn == nil {
		return nil
	}
	c := e.Shared.Client(1)
	defer c.Close()
	return fn(ctx, c)
}

// Stop stops every server the run started, and the adapter processes kept between its
// sales, saying on stderr what would not stop.
func (e *Env) Stop(stderr io.Writer) {
	adapter.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil {
		fmt.Fprintln(stderr, "stockbench: stop redis:", OneLine(err.Error()))
	}
}

// sideBySide is the most buyers a sale may have to run beside others: a sale of more
// measures the driver's and the server's capacity, and runs alone.
const sideBySide = 10000

// alone reports whether j's figures are what is compared, so that it runs with nothing
// beside it: a sale of more than sideBySide buyers, and a sale with no fault (the rows
// the soft gates compare, by their ratios to a reference design run the same way).
// A sale's draws after its first are not measured: they run side by side.
func alone(j Job) bool {
	return j.buyers() > sideBySide || (len(j.need().Faults) == 0 && first(j))
}

// runAll runs the jobs, recording each in file in the jobs' order, until ctx ends or the
// shared server stops answering; it returns the exit code. Up to parallel fault sales run
// side by side, each on servers of its own (they mostly sleep through their faults); the
// others run alone (see alone). A sale that cannot finish while the shared server still
// answers (its own servers failed it) is recorded as it ended, a "?" cell with its reason,
// and the others run: the run is then incomplete and exits 1 at the end. A sale that
// could not start, or a shared server gone, stops new sales from starting; those running
// finish.
func (e *Env) runAll(ctx context.Context, jobs []Job, o Options, board *live.Board, out *results.Output, file *results.File, stderr io.Writer) int {
	parallel := max(o.Parallel, 1)
	if !e.Shared.Info.Owned {
		parallel = 1 // a server of each sale's own cannot be started on the user's Redis
	}
	// Sales side by side mostly wait on their faults and their servers: they may use every
	// CPU. A sale alone is measured, and gets the CPUs --procs gave it (see useProcs).
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	cells := len(jobs)
	jobs = expand(jobs, o.Runs)
	sc := &schedule{ran: make([]*results.Run, len(jobs)), code: ExitOK, file: file, out: out, stderr: stderr}
	tokens := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for _, i := range order(jobs, parallel) {
		j := jobs[i]
		w := 1
		if alone(j) {
			w = parallel
		}
		for range w {
			tokens <- struct{}{}
		}
		release := func() {
			for range w {
				<-tokens
			}
		}
		if sc.stopped() || ctx.Err() != nil {
			release()
			break
		}
		if w == parallel {
			runtime.GOMAXPROCS(procs) // alone: nothing else runs now
		} else {
			runtime.GOMAXPROCS(max(procs, runtime.NumCPU()))
		}
		step := fmt.Sprintf("stockbench: [%d/%d]", i+1, len(jobs))
		fmt.Fprintf(stderr, "%s %s\n", step, j.describe())
		wg.Go(func() {
			defer release()
			prefix := fmt.Sprintf("{stockbench:%s:%d}", file.ID, i)
			run, err := e.runJob(ctx, j, prefix, w < parallel, stderr, board, i)
			if err == nil && o.Repeat > 1 && len(j.need().Faults) == 0 && first(j) {
				e.repeat(ctx, j, prefix, o.Repeat, &run, step, stderr)
			}
			goOn := err != nil && run.Scenario != "" && len(jobs) > 1 && ctx.Err() == nil && e.answers(ctx)
			if err == nil || run.Scenario != "" {
				e.annotate(&run, j)
				if board != nil {
					board.Ended(i, run)
				}
			}
			sc.record(ctx, i, j, step, run, err, goOn)
		})
	}
	wg.Wait()
	code := sc.finish(ctx, len(jobs))
	if o.Runs > 1 {
		file.Runs = fold(sc.ran, o.Runs)
		if len(file.Runs) < cells && code == ExitOK {
			code, file.Incomplete = ExitUnfinished, fmt.Sprintf("%d of %d sales did not run", cells-len(file.Runs), cells)
		}
	}
	return code
}

// first reports whether j is a sale's first draw, or its only run: the one whose speed
// is measured.
func first(j Job) bool {
	d, ok := j.(draw)
	return !ok || d.k == 0
}

// MaxRepeat bounds Options.Repeat: the soft rules' test gains little past a few runs a
// side.
const MaxRepeat = 20

// repeat runs j again until it has run times in all, for its speed: each complete run's
// figures go into run.Spread, the record's first. A run cut short ends the repeats; the
// record stands either way.
func (e *Env) repeat(ctx context.Context, j Job, prefix string, times int, run *results.Run, step string, stderr io.Writer) {
	s := &results.Spread{}
	s.Add(run)
	for k := 1; k < times && ctx.Err() == nil; k++ {
		again, err := e.runJob(ctx, j, fmt.Sprintf("%s:%d", prefix, k), false, stderr, nil, 0)
		if err != nil || !again.Complete {
			break
		}
		s.Add(&again)
	}
	run.Spread = s
	lo, hi := slices.Min(s.P50Us), slices.Max(s.P50Us)
	fmt.Fprintf(stderr, "%s ran %d times for its speed: p50 %s to %s\n", step, len(s.P50Us),
		results.FormatMicros(lo), results.FormatMicros(hi))
}

// annotate adds to a job's run what the command knows of it: whether the server it
// counted commands on was shared with others, and the command that reruns it.
func (e *Env) annotate(run *results.Run, j Job) {
	if run.Commands != nil && !e.Shared.Info.Owned {
		run.Commands.Shared = true
	}
	if e.again == nil {
		return
	}
	if s := e.again(unwrap(j)); s != nil {
		run.Sale, run.Rerun = s, s.Args()
	}
}

// schedule is what runAll's sales record as they end, side by side: each run in the
// jobs' order, rewritten into the run directory after every one, the first reason the
// run stops, and the sales that did not finish while the others went on.
type schedule struct {
	mu         sync.Mutex
	ran        []*results.Run
	code       int
	unfinished []string
	file       *results.File
	out        *results.Output
	stderr     io.Writer
}

// stopped reports whether a sale's end has stopped the run.
func (sc *schedule) stopped() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.code != ExitOK
}

// fail records the first reason the run stops; sc.mu is held.
func (sc *schedule) fail(c int, why string) {
	if sc.code == ExitOK {
		sc.code, sc.file.Incomplete = c, why
	}
}

// record notes how job i ended: a sale that could not start stops the run; one that
// started is written with the others, and if it failed, stops the run unless goOn (its
// own servers failed it, the shared one still answers).
func (sc *schedule) record(ctx context.Context, i int, j Job, step string, run results.Run, err error, goOn bool) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if err != nil && run.Scenario == "" {
		if ctx.Err() != nil {
			sc.fail(ExitInterrupted, fmt.Sprintf("interrupted while %s was starting", j.design()))
		} else {
			sc.fail(ExitUnfinished, fmt.Sprintf("%s could not start: %s", j.design(), OneLine(err.Error())))
		}
		return
	}
	sc.ran[i] = &run
	fmt.Fprintf(sc.stderr, "%s %s (%s) in %s\n", step, run.Verdict.Cell(), run.Verdict, run.Duration.Round(time.Millisecond))
	sc.file.Runs = sc.file.Runs[:0]
	for _, r := range sc.ran {
		if r != nil {
			sc.file.Runs = append(sc.file.Runs, *r)
		}
	}
	if err := sc.out.Progress(sc.file); err != nil {
		fmt.Fprintln(sc.stderr, "stockbench: write results:", OneLine(err.Error()))
	}
	switch {
	case err != nil:
		why := fmt.Sprintf("%s with %s under %s failed: %s", run.Subject(), j.design(), run.FaultPlan(), OneLine(err.Error()))
		if !goOn {
			sc.fail(ExitUnfinished, why)
			break
		}
		sc.unfinished = append(sc.unfinished, why)
		fmt.Fprintln(sc.stderr, "stockbench: did not finish, the other sales go on:", why)
	case ctx.Err() != nil:
		sc.fail(ExitInterrupted, fmt.Sprintf("interrupted during %s with %s", run.Subject(), j.design()))
	}
}

// finish returns the run's exit code once every sale ended, with why it is incomplete:
// interrupted before every one of the jobs ran, or some did not finish.
func (sc *schedule) finish(ctx context.Context, jobs int) int {
	if sc.code == ExitOK && ctx.Err() != nil && len(sc.file.Runs) < jobs {
		sc.code, sc.file.Incomplete = ExitInterrupted, "interrupted before every sale ran"
	}
	if len(sc.unfinished) > 0 {
		slices.Sort(sc.unfinished) // side by side, they end in no particular order
		why := fmt.Sprintf("%d of %d sales did not finish: %s", len(sc.unfinished), jobs, strings.Join(sc.unfinished, "; "))
		if sc.code == ExitOK {
			sc.code, sc.file.Incomplete = ExitUnfinished, why
		} else {
			sc.file.Incomplete += "; " + why
		}
	}
	return sc.code
}

// answers reports whether the shared server still answers, within 2 s: when it does, a
// sale that failed was failed by servers of its own, and the next sales can run.
func (e *Env) answers(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c := e.Shared.Client(1)
	defer c.Close()
	return c.Ping(ctx).Err() == nil
}

// order is the order the jobs run in: as given one at a time; side by side, the sales
// that run alone first, in a process and on servers that no fault sale has touched yet,
// then the fault sales. The record keeps the jobs' order either way.
func order(jobs []Job, parallel int) []int {
	var first, then []int
	for i, j := range jobs {
		if parallel > 1 && !alone(j) {
			then = append(then, i)
		} else {
			first = append(first, i)
		}
	}
	return append(first, then...)
}

// Run runs one sale under the key prefix prefix on the shared server and whatever more
// servers it needs, as a lone sale of a run does; a long one reports its progress on
// progress when that is a terminal.
func (e *Env) Run(ctx context.Context, j Job, prefix string, progress io.Writer) (results.Run, error) {
	return e.runJob(ctx, j, prefix, false, progress, nil, 0)
}

// runJob runs one sale on the shared server and whatever more servers it needs; apart,
// on servers of its own only (see rig.Apart). Its progress goes to stderr's line and to
// board's sale i.
func (e *Env) runJob(ctx context.Context, j Job, prefix string, apart bool, stderr io.Writer, board *live.Board, i int) (results.Run, error) {
	need := j.need()
	need.Apart = apart
	watch, done := watching(stderr, board, i)
	defer done()
	began := time.Now()
	run, err := rig.On(ctx, e.Harness, need, func(ctx context.Context, r scenarios.Redis) (results.Run, error) {
		return j.run(ctx, prefix, r, watch)
	})
	// What the sale did not spend itself went on its servers: starting, resetting, stopping.
	run.Spent.Servers = max(0, time.Since(began)-run.Spent.SetUp-run.Spent.Selling-run.Spent.Judging)
	return run, err
}

// Buyers' commands leave garbage at the rate Redis answers, and when a waiting buyer was a
// goroutine, with 200,000 of them the collector's default pacing let the heap double past
// what was live: 1.2 GB of RSS where 0.7 GB was live. A soft limit sized to the largest
// sale makes it collect sooner instead. The limit must not be below what the sale needs, or the collector
// would run flat out. (Turning GOGC off under the limit made no difference to the lua
// sale's rate that stood out of this machine's noise, so GOGC keeps pacing small runs.)
const (
	memoryFloor    = 900 << 20
	memoryPerBuyer = 512 // a waiting buyer: its ledger entry, its place among the waiters, doubled
)

// LimitMemory sets the soft memory limit for sales of at most buyers buyers, unless
// GOMEMLIMIT set one.
func LimitMemory(buyers int) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(max(memoryFloor, int64(buyers)*memoryPerBuyer))
}

// RunApart runs one sale as a run runs one beside others: on servers of its own where
// the harness starts them (on the user's Redis, on the shared one, under its own
// prefix), its record given its sale value (Options.Sale).
func (e *Env) RunApart(ctx context.Context, j Job, prefix string) (results.Run, error) {
	run, err := e.runJob(ctx, j, prefix, e.Shared.Info.Owned, io.Discard, nil, 0)
	if err == nil || run.Scenario != "" {
		e.annotate(&run, j)
	}
	return run, err
}
