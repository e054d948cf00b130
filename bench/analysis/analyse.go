package analysis

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"golang.org/x/sync/semaphore"
)

// Config is one analysis: a library's claims, its design's sale, and how to run sales.
type Config struct {
	Claims *Claims
	// Sale is the design's sale at its preset with the claims' settings; each cell
	// sets its fault and each draw its seed.
	Sale  results.Sale
	Cells []string
	// Runs is each cell's draws; Parallel the most sales at once (each on servers of
	// its own); Shrink how long each finding's shrink may take.
	Runs, Parallel int
	Shrink         time.Duration
	// Explore, with a Budget, explores what the cells leave open, after them.
	Explore explore.Config
	// Repros are the library's standalone reproductions, each run once the findings
	// are settled.
	Repros []Repro
	// Run runs one sale; Machine says where (CPUs, Redis), for the page.
	Run     func(ctx context.Context, s results.Sale) (results.Run, error)
	Machine string
	// Progress, when set, is given a line as each cell ends and each finding settles.
	Progress func(string)
}

// Record is what an analysis measured: the page is rendered from it and the claims
// file, so that a claim's wording or mapping can change without measuring again.
type Record struct {
	Library string           `json:"library"`
	Release string           `json:"release"`
	Design  string           `json:"design"`
	Kind    results.SaleKind `json:"kind"`
	// Sale is the cells' sale, with no fault and the first draw's seed.
	Sale     results.Sale  `json:"sale"`
	Date     string        `json:"date"`
	Elapsed  time.Duration `json:"elapsed_ns"`
	Sales    int           `json:"sales"`
	Machine  string        `json:"machine"`
	Complete bool          `json:"complete"`
	Cells    []Cell        `json:"cells"`
	// Findings are the classes that broke a claim or the hold when measured, each
	// shrunk and rerun, and the exploration's.
	Findings    []Finding    `json:"findings"`
	Exploration *Exploration `json:"exploration,omitempty"`
	// Repros are the runs of the library's standalone reproductions.
	Repros []ReproRun `json:"repros,omitempty"`
	// Time is where the wall time went: the cells, the findings' shrinks and reruns,
	// and the exploration's own phases, each with its sales' own time by part.
	Time []explore.PhaseTime `json:"time,omitempty"`
}

// The phases of an analysis, in the order they run, for where its time went; the
// exploration's own follow, named "explore: " and its phase.
const (
	Cells     explore.Phase = "cells"
	Shrinking explore.Phase = "shrinking"
	Rerunning explore.Phase = "rerunning"
)

// Finding is a class shown under a fault plan, its smallest sale and its reruns.
type Finding struct {
	Faults string       `json:"faults"`
	Class  oracle.Class `json:"class"`
	// Timing is the exploration's timing region; empty for a cell's.
	Timing string `json:"timing,omitempty"`
	// Smallest is what the shrink reached; Shrunk is false when its time ran out first.
	Smallest    results.Sale `json:"smallest"`
	Shrunk      bool         `json:"shrunk"`
	ShrinkSales int          `json:"shrink_sales"`
	// Shown of Reruns reruns of Smallest (seeds drawn from its own) showed Class.
	Shown  int `json:"shown"`
	Reruns int `json:"reruns"`
	// ControlShown of ControlRuns reruns of Smallest without its fault, with the same
	// seeds, showed Class: the finding's control (none for a finding under no fault,
	// nor for the exploration's).
	ControlShown int `json:"control_shown,omitempty"`
	ControlRuns  int `json:"control_runs,omitempty"`
	// Verdict and Timeline are a rerun that showed it (else the sale that first did).
	Verdict  string   `json:"verdict"`
	Timeline []string `json:"timeline"`
}

// Exploration is what the exploration after the cells searched and found.
type Exploration struct {
	Budget      string   `json:"budget"`
	Seed        uint64   `json:"seed"`
	Draws       int      `json:"draws"`
	Sales       int      `json:"sales"`
	Regions     int      `json:"regions"`
	Faults      []string `json:"faults"`
	NeverStruck []string `json:"never_struck,omitempty"`
	Complete    bool     `json:"complete"`
}

// Analyse runs the cells, then shrinks and reruns each class that breaks a claim or the
// hold, then explores. Ctrl-C (ctx's end) keeps what was measured: the record says it
// is incomplete.
func Analyse(ctx context.Context, cfg Config) *Record {
	began := time.Now()
	rec := &Record{Library: cfg.Claims.Library, Release: cfg.Claims.Release, Design: cfg.Sale.Design, Kind: cfg.Sale.Kind,
		Sale: cfg.Sale.Clone(), Date: began.UTC().Format(time.DateOnly), Machine: cfg.Machine}
	rec.Sale.Faults = "none"
	a := &analysis{cfg: cfg, rec: rec, firsts: map[[2]string]results.Run{}, parallel: max(1, cfg.Parallel), slots: semaphore.NewWeighted(int64(max(1, cfg.Parallel))),
		time: map[explore.Phase]*explore.PhaseTime{}}
	a.cells(ctx)
	for _, f := range a.toSettle() {
		if ctx.Err() != nil {
			break
		}
		a.settle(ctx, f.cell, f.class)
	}
	for _, ph := range []explore.Phase{Cells, Shrinking, Rerunning} {
		if t := a.time[ph]; t != nil {
			rec.Time = append(rec.Time, *t)
		}
	}
	for _, r := range cfg.Repros {
		if ctx.Err() != nil {
			break
		}
		run := r.Run(ctx)
		a.progress("reproduction %s (%s): %s", r.ID, run.Command, run.Outcome())
		rec.Repros = append(rec.Repros, run)
	}
	if cfg.Explore.Budget > 0 && ctx.Err() == nil {
		a.explore(ctx)
	}
	rec.Elapsed = time.Since(began).Round(time.Second)
	rec.Complete = ctx.Err() == nil
	return rec
}

type analysis struct {
	cfg    Config
	rec    *Record
	mu     sync.Mutex
	firsts map[[2]string]results.Run // the first run of each cell to show each class
	// slots bounds the sales at once: parallel of them, a sale on a group of
	// containers counting as several (see weight).
	parallel int
	slots    *semaphore.Weighted
	time     map[explore.Phase]*explore.PhaseTime
}

// run runs s in a free slot for phase ph, counting it and its time.
func (a *analysis) run(ctx context.Context, ph explore.Phase, s results.Sale) (results.Run, error) {
	w := a.weight(s)
	if err := a.slots.Acquire(ctx, w); err != nil {
		return results.Run{}, err
	}
	defer a.slots.Release(w)
	began := time.Now()
	run, err := a.cfg.Run(ctx, s)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.rec.Sales++
	t := a.phase(ph)
	t.Sales++
	t.Took += time.Since(began)
	t.Spent.Add(run.Spent)
	return run, err
}

// maxGroups is how many sales on a Sentinel group or a Cluster run at once, at most:
// five or six containers each, started, watched and removed by the engine. Counted as
// one sale each, asynq's sixteen at once (its sales mostly wait on its recoverer) put
// sixteen Sentinel groups on two CPUs: 12 of its 20 sentinel-kill draws did not finish
// (containers not ready in time, the failover client silent for 7 s), where four at
// once, the other libraries' default, finished every one.
const maxGroups = 4

// weight is the slots sale s takes: a share of them that lets at most maxGroups such
// sales run at once.
func (a *analysis) weight(s results.Sale) int64 {
	plan, err := faults.Parse(s.Faults)
	if n := plan.Needs(); err == nil && (n.Sentinel || n.Cluster) {
		return int64(max(1, a.parallel/maxGroups))
	}
	return 1
}

// phase is ph's time so far, made at its first use; a.mu is held.
func (a *analysis) phase(ph explore.Phase) *explore.PhaseTime {
	if a.time[ph] == nil {
		a.time[ph] = &explore.PhaseTime{Phase: ph}
	}
	return a.time[ph]
}

// timed adds the wall time from now to the returned call's to phase ph; the phases run
// one after the other, so their walls add up to the analysis's.
func (a *analysis) timed(ph explore.Phase) (done func()) {
	began := time.Now()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		a.phase(ph).Wall += time.Since(began)
	}
}

func (a *analysis) progress(format string, args ...any) {
	if a.cfg.Progress != nil {
		a.cfg.Progress(fmt.Sprintf(format, args...))
	}
}

// cells runs every cell's draws side by side, as slots allow.
func (a *analysis) cells(ctx context.Context) {
	defer a.timed(Cells)()
	a.rec.Cells = make([]Cell, len(a.cfg.Cells))
	var wg sync.WaitGroup
	for i, fault := range a.cfg.Cells {
		cell := &a.rec.Cells[i]
		cell.Fault = fault
		draws := make([]*results.Draw, a.cfg.Runs)
		var cw sync.WaitGroup
		plan, nodes := CellPlan(fault)
		for k := range a.cfg.Runs {
			s := a.cfg.Sale.Clone()
			s.Faults = plan
			if nodes > 1 && s.Source != nil {
				s.Source.Nodes = nodes
			}
			for _, set := range CellSettings(fault) {
				n, v, _ := strings.Cut(set, "=")
				s.Set(n, v)
			}
			s.Set("seed", strconv.FormatUint(results.DrawSeed(a.cfg.Sale.Seed(), k), 10))
			cw.Go(func() {
				run, err := a.run(ctx, Cells, s)
				if err != nil || !run.Complete {
					if ctx.Err() == nil { // why it counts as "did not finish", for whoever reruns it
						a.progress("%s: draw %d did not finish: %s", fault, k+1, cmp.Or(errText(err), run.Error, "cut short"))
					}
					return
				}
				d := results.DrawOf(&run)
				draws[k] = &d
				a.mu.Lock()
				defer a.mu.Unlock()
				for _, class := range Names() {
					key := [2]string{fault, string(class)}
					if _, ok := a.firsts[key]; !ok && d.Has(string(class)) {
						a.firsts[key] = run
					}
				}
			})
		}
		wg.Go(func() {
			cw.Wait()
			for _, d := range draws {
				if d == nil {
					cell.Unfinished++
					continue
				}
				cell.Draws = append(cell.Draws, *d)
			}
			a.progress("%s: %s", fault, cellLine(*cell))
		})
	}
	wg.Wait()
}

// cellLine is a cell's classes as the progress lines say them.
func cellLine(c Cell) string {
	var d results.Draws
	for _, x := range c.Draws {
		d.Runs++
		if d.Classes == nil {
			d.Classes = map[oracle.Class]int{}
		}
		d.Classes[x.Class]++
	}
	line := d.Cell()
	if c.Unfinished > 0 {
		line += fmt.Sprintf(", %d did not finish", c.Unfinished)
	}
	return cmp.Or(line, "no draw finished")
}

type toSettle struct {
	cell  string
	class oracle.Class
}

// toSettle are the findings to shrink and rerun, one a cell: its most severe class
// that breaks a claim, else its most severe that breaks the hold. The cell's other
// classes keep their rates.
func (a *analysis) toSettle() []toSettle {
	var out []toSettle
	for _, c := range a.rec.Cells {
		if s, ok := c.Target(a.cfg.Claims); ok {
			out = append(out, toSettle{c.Fault, s.Class})
		}
	}
	return out
}

// settle shrinks the first sale of cell that showed class, within the shrink's time,
// and reruns the smallest Reruns times.
func (a *analysis) settle(ctx context.Context, cell string, class oracle.Class) {
	first := a.firsts[[2]string{cell, string(class)}]
	if first.Sale == nil {
		return
	}
	earns := func(ctx context.Context, s results.Sale) (results.Run, bool) {
		var last results.Run
		for range 2 { // twice, as the explorer's shrink: a race shown once is not kept
			run, err := a.run(ctx, Shrinking, s)
			if err != nil || !shows(&run, class) {
				return results.Run{}, false
			}
			last = run
		}
		return last, true
	}
	shrunk := a.timed(Shrinking)
	deadline := time.Now().Add(a.cfg.Shrink)
	sctx, cancel := context.WithDeadline(ctx, deadline)
	small, last, tried := explore.Shrink(sctx, *first.Sale, first, earns, deadline, a.parallel)
	cancel()
	shrunk()
	f := Finding{Faults: cell, Class: class, Smallest: small, ShrinkSales: tried, Shrunk: ctx.Err() == nil && time.Now().Before(deadline)}
	example := last
	f.Shown, f.Reruns, example = a.rerun(ctx, small, class, example)
	if plan, _ := CellPlan(cell); plan != faults.None {
		control := small.Clone()
		control.Faults = faults.None
		f.ControlShown, f.ControlRuns, _ = a.rerun(ctx, control, class, results.Run{})
	}
	f.Verdict, f.Timeline = example.Verdict.String(), Timeline(&example)
	a.rec.Findings = append(a.rec.Findings, f)
	a.progress("%s under %s: shrunk to %s buyers and a stock of %s in %d sales; shown in %d of %d reruns, %d of %d without the fault", class, cell, small.Get("buyers"), small.Get("stock"), tried, f.Shown, f.Reruns, f.ControlShown, f.ControlRuns)
}

// rerun runs s Reruns times with seeds drawn from its own, as `run --runs` does, and
// counts those that showed class; example becomes one of them that did.
func (a *analysis) rerun(ctx context.Context, s results.Sale, class oracle.Class, example results.Run) (shown, runs int, _ results.Run) {
	defer a.timed(Rerunning)()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for k := range Reruns {
		r := s.Clone()
		r.Set("seed", strconv.FormatUint(results.DrawSeed(s.Seed(), k), 10))
		wg.Go(func() {
			run, err := a.run(ctx, Rerunning, r)
			if err != nil || !run.Complete {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			runs++
			if shows(&run, class) {
				shown++
				example = run
			}
		})
	}
	wg.Wait()
	return shown, runs, example
}

// explore explores the design for what the cells leave open, each finding judged later
// by the claims as a cell's is.
func (a *analysis) explore(ctx context.Context) {
	cfg := a.cfg.Explore
	cfg.Designs = []results.Sale{a.cfg.Sale}
	rep, err := explore.Explore(ctx, cfg)
	if err != nil {
		a.progress("explore: %v", err)
		return
	}
	a.rec.Sales += rep.Sales
	for _, t := range rep.Time {
		t.Phase = "explore: " + t.Phase
		a.rec.Time = append(a.rec.Time, t)
	}
	a.rec.Exploration = &Exploration{Budget: rep.Budget, Seed: rep.Seed, Draws: rep.Draws, Sales: rep.Sales, Regions: len(rep.Findings),
		Faults: rep.Faults, NeverStruck: rep.NeverStruck(), Complete: rep.Complete}
	for _, fd := range rep.Findings {
		a.rec.Findings = append(a.rec.Findings, regionFindings(fd)...)
	}
	a.progress("explored for %s: %d draws, %d sales, findings in %d regions", rep.Budget, rep.Draws, rep.Sales, len(rep.Findings))
}

// regionFindings are the classes the exploration's region fd showed in the reruns of
// its smallest sale, each judged later by the claims under the region's faults. A rerun
// whose planned fault never struck is left out, of the shown and of the reruns: what it
// showed was not shown under that fault, and its claims must not excuse it.
func regionFindings(fd *explore.Finding) []Finding {
	if len(fd.Rates) == 0 || fd.Rates[0].Runs == 0 {
		return nil
	}
	r := fd.Rates[0]
	struck := 0
	for _, d := range r.Draws.Each {
		if !d.Unstruck {
			struck++
		}
	}
	var out []Finding
	for _, class := range Names() {
		shown := 0
		for _, d := range r.Draws.Each {
			if !d.Unstruck && d.Has(string(class)) {
				shown++
			}
		}
		if shown == 0 {
			continue
		}
		f := Finding{Faults: fd.Faults, Timing: fd.Timing, Class: class, Smallest: fd.Smallest, Shrunk: fd.Shrunk, ShrinkSales: fd.ShrinkSales,
			Shown: shown, Reruns: struck}
		switch {
		case r.Example != nil && len(r.Example.NotExercised) == 0:
			f.Verdict, f.Timeline = r.Example.Verdict.String(), Timeline(r.Example)
		case r.Example != nil:
			f.Timeline = []string{"(the rerun kept as its example did not strike " + strings.Join(r.Example.NotExercised, ", ") + ")"}
		}
		out = append(out, f)
	}
	return out
}

// shows reports whether run showed class, as its verdict's class or a kind of finding.
func shows(run *results.Run, class oracle.Class) bool {
	return results.DrawOf(run).Has(string(class))
}
