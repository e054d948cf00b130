// Package explore searches the sales a design can be put through for what nobody aimed
// at: it draws faults with their modes and settings, timings, contention and topologies
// from the fault table and the presets, runs the draws on every design given (paired),
// steers towards what found something or reached something new, groups findings by
// signature, shrinks each, and measures each one's rate for every design, with an exact
// test between them.
package explore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

// ErrRefused marks a runner's error for a drawn sale that its design or its checks
// refuse (a fault the design takes no part in, a setting out of range): the draw is
// passed over, not a failure.
var ErrRefused = errors.New("refused")

// Runner runs one sale and returns its run; slot numbers it among the search's sales
// (0 for the shrinks' and the reruns'), for a runner that wants a key prefix of its own.
type Runner func(ctx context.Context, s results.Sale, slot int) (results.Run, error)

// Config is what an exploration searches and how long.
type Config struct {
	// Designs are each design's sale at its preset, all of one kind: the draws change
	// their settings alike.
	Designs []results.Sale
	// Space is what the draws are drawn from.
	Space Space
	// Budget is how long the exploration may take in all, shrinking and measuring
	// included. Default: DefaultBudget.
	Budget time.Duration
	// Seed fixes the draws. Default 1.
	Seed uint64
	// Parallel is the most sales that run at once, each on servers of its own. Drawn
	// sales are small and mostly wait on their holders' work, their faults and their
	// TTLs: how many run at once starts at four per CPU and follows the machine's idle
	// CPU (see limiter) up to Parallel. Default DefaultParallel.
	Parallel int
	// Idle reads the machine's idle CPU for the limit. Default: the machine's CPU times;
	// where they cannot be read, the limit stays where it starts.
	Idle Idle
	// Confirm is how many times each finding's smallest sale is rerun for every design,
	// for its rate. Default 10.
	Confirm int
	// Tries is how many runs of a smaller sale must each show the finding again for a
	// shrink to keep it. Default 2.
	Tries int
	// Run runs a sale.
	Run Runner
	// Progress, when set, is given a line of what has been found and the time left
	// every few draws.
	Progress func(string)
	// Verbose, when set, is given a line per sale: its phase, design and faults, and
	// where its time went.
	Verbose func(string)
}

// Defaults of Config.
const (
	DefaultBudget   = 10 * time.Minute
	DefaultParallel = 32
	DefaultConfirm  = 10
	// Alpha is the family-wise error rate of the comparisons between designs, held by
	// Holm's correction over every signature and pair: the chance that an exploration of
	// a design against itself reports any difference.
	Alpha = 0.05
	// searchShare is the share of the budget the search takes at least; shrinking and
	// measuring the findings take the rest. The search goes on past it, up to
	// searchShareMax, while a fault of the space has struck in fewer than MinStrikes
	// draws: a region no draw reached cannot be told apart, however well the others
	// are measured.
	searchShare    = 0.5
	searchShareMax = 0.75
	// MinStrikes is how many draws each fault of the space must strike in (on any
	// design) before the search may end: every other draw, while one has not, is a
	// fresh draw of the fault struck least.
	MinStrikes = 3
	// grace is how long after the budget a sale under way may take to end; one still
	// going then is cut short and left out.
	grace = 20 * time.Second
)

// Explore runs an exploration. Ctrl-C (ctx's end) keeps what was found: the report says
// it is incomplete.
func Explore(ctx context.Context, cfg Config) (*Report, error) {
	cfg = withDefaults(cfg)
	if len(cfg.Designs) == 0 {
		return nil, errors.New("explore: no design to explore")
	}
	for _, d := range cfg.Designs[1:] {
		if d.Kind != cfg.Designs[0].Kind {
			return nil, fmt.Errorf("explore: %s is a %s design and %s a %s one: designs compared must sell alike", cfg.Designs[0].Design, cfg.Designs[0].Kind, d.Design, d.Kind)
		}
	}
	x, cancel := newExplorer(ctx, cfg)
	defer cancel()
	go x.lim.follow(x.sctx, cfg.Idle)
	searched := x.clock.enter(Searching)
	x.search(ctx, x.start.Add(time.Duration(float64(cfg.Budget)*searchShare)), x.start.Add(time.Duration(float64(cfg.Budget)*searchShareMax)))
	searched()
	x.rep.Searched = time.Since(x.start)
	x.settle(ctx)
	// Time left over once every region is settled goes back to the search: half of it
	// to search again, the rest to settle what that found, while a round has time for a
	// few sales.
	for ctx.Err() == nil {
		left := time.Until(x.deadline)
		if left < x.roundLeast() {
			break
		}
		began := time.Now()
		x.cfg.Progress(fmt.Sprintf("explore: every region settled with %s left over: searching again for half of it", left.Round(time.Second)))
		searched := x.clock.enter(Searching)
		x.search(ctx, began.Add(left/2), began.Add(left/2))
		searched()
		x.rep.Searched += time.Since(began)
		x.rep.Resumed++
		x.settle(ctx)
	}
	x.rep.finish(x, ctx.Err() != nil)
	return x.rep, nil
}

// roundLeast is the least time left over that the search resumes for: a tenth of the
// budget, and four of the exploration's sales at their mean so far (a round shorter
// than its sales would only cut them short).
func (x *explorer) roundLeast() time.Duration {
	sales, took := x.clock.total()
	least := x.cfg.Budget / 10
	if sales > 0 {
		least = max(least, 4*took/time.Duration(sales))
	}
	return least
}

// newExplorer is an exploration of cfg (its defaults set) starting now; cancel ends
// its sales' context.
func newExplorer(ctx context.Context, cfg Config) (x *explorer, cancel func()) {
	x = &explorer{cfg: cfg, start: time.Now(), rep: newReport(cfg), seen: map[string]bool{}, found: map[region]*Finding{}, clock: newClock(),
		lim:    newLimiter(startLimit(), len(cfg.Designs), cfg.Parallel),
		struck: map[faults.Kind]int{}, tried: map[faults.Kind]int{}, inFlight: map[faults.Kind]int{}, refused: map[faults.Kind]bool{},
		draws: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	x.deadline = x.start.Add(cfg.Budget)
	x.sctx, cancel = context.WithDeadline(ctx, x.deadline.Add(grace))
	return x, cancel
}

func withDefaults(c Config) Config {
	c.Budget = cmp.Or(c.Budget, DefaultBudget)
	c.Seed = cmp.Or(c.Seed, 1)
	c.Parallel = cmp.Or(c.Parallel, DefaultParallel)
	c.Confirm = cmp.Or(c.Confirm, DefaultConfirm)
	c.Tries = cmp.Or(c.Tries, 2)
	if c.Progress == nil {
		c.Progress = func(string) {}
	}
	if c.Idle == nil {
		c.Idle = MachineIdle()
	}
	return c
}

// explorer is one exploration's state.
type explorer struct {
	cfg             Config
	start, deadline time.Time
	rep             *Report
	// corpus is the draws that found something or reached a feature none had before,
	// which later draws mutate; seen is every feature reached.
	corpus []gene
	seen   map[string]bool
	// found is each region's finding, order the order they were first seen;
	// signatures counts the kinds of finding in them, newest the last one seen.
	found      map[region]*Finding
	order      []region
	signatures int
	newest     Signature
	// sctx is what sales run under: ctx, ended a grace after the budget.
	sctx context.Context
	// clock adds up where the time went, by phase.
	clock *clock
	// lim is how many sales may run at once.
	lim *limiter
	// drawn is every draw of the search in the order drawn.
	drawn []gene
	// struck counts the absorbed draws each fault struck in (on any design), tried those
	// that planned it, inFlight the draws under way that plan it; refused are the faults
	// a design refused alone. Coverage draws steer by them.
	struck, tried, inFlight map[faults.Kind]int
	refused                 map[faults.Kind]bool
	// draws is the seed's stream of draws, which a resumed search goes on with.
	draws *rand.Rand
	// learnt is what reruns took against their estimates.
	learnt learnt
}

// region is where in the space a finding showed: its faults and its timing.
type region struct{ faults, timing string }

// search draws sale after sale until until, and past it up to most while a fault of
// the space has struck in fewer than MinStrikes draws, each draw's sale for every
// design, run side by side, with as many sales running at once as the limiter lets: a
// slot freed by a short sale takes the next draw rather than waiting for the longest
// sale of a batch. A draw is drawn from what the draws at least window before it found,
// absorbed in the order they were drawn, so that a seed gives the same draws for the
// same outcomes whatever order the sales end in and however many ran at once (window is
// set by Parallel, the limit's ceiling, not by the limit).
func (x *explorer) search(ctx context.Context, until, most time.Time) {
	r := x.draws
	width := len(x.cfg.Designs)
	atOnce := max(1, x.cfg.Parallel/width) // draws running at once, at most
	window := 2 * atOnce
	var drawn []*pending // not yet absorbed, in the order drawn
	absorbed := 0
	absorbOldest := func() {
		p := drawn[0]
		drawn = drawn[1:]
		<-p.done
		x.planned(p.g, -1)
		if x.absorb(p.out) {
			x.corpus = append(x.corpus, p.g)
		}
		if absorbed++; absorbed%min(3*atOnce, 12) == 0 {
			x.cfg.Progress(x.progress("searching"))
		}
	}
	extended := false // past until, for the coverage
	searching := func() bool {
		now := time.Now()
		if now.Before(until) {
			return true
		}
		if now.Before(most) && x.leastStruck() != "" {
			extended = true
			return true
		}
		return false
	}
	for searching() && ctx.Err() == nil {
		if len(drawn) == window {
			absorbOldest()
			continue // its sale may have taken the search past its deadline
		}
		if !x.lim.acquire(ctx, width) {
			break
		}
		if !searching() { // the wait for a slot used it up
			x.lim.release(width)
			break
		}
		g := x.next(r)
		x.planned(g, 1)
		p := x.launch(g, func() { x.lim.release(width) })
		x.drawn = append(x.drawn, p.g)
		drawn = append(drawn, p)
	}
	for _, p := range drawn {
		<-p.done
	}
	if ctx.Err() != nil {
		return // a draw cut short says nothing of its sales
	}
	for len(drawn) > 0 {
		absorbOldest()
	}
	end := "the search's share of the budget is spent"
	switch k := x.leastStruck(); {
	case x.rep.Searched > 0: // a resumed search
		end = "its half of the time left over is spent"
	case k != "":
		end = fmt.Sprintf("the search stops at its most, %s struck in %d draws of the %d wanted", k, x.struck[k], MinStrikes)
	case extended:
		end = fmt.Sprintf("the search went on past its half until every fault struck in %d draws", MinStrikes)
	}
	// Said even when no line was due: on a slow machine a short search absorbs fewer
	// draws than a progress line waits for, and its user would see settling begin unsaid.
	x.cfg.Progress(x.progress("searching") + "; " + end)
}

// planned counts g's faults as under way (by 1), or as tried and no longer under way
// (by -1).
func (x *explorer) planned(g gene, by int) {
	for _, f := range g.Faults {
		x.inFlight[f.Kind] += by
		if by < 0 {
			x.tried[f.Kind]++
		}
	}
}

// leastStruck is the fault of the space struck in the fewest absorbed draws, counting
// those under way that plan it, while that is fewer than MinStrikes; "" once every
// fault has. A fault a design refuses, or that twice MinStrikes draws planned, is not
// waited for: its victim seldom comes in this space, and the report says so. Ties go
// to the space's order, so that a seed draws the same.
func (x *explorer) leastStruck() faults.Kind {
	var least faults.Kind
	fewest := MinStrikes
	for _, k := range x.cfg.Space.Faults {
		if x.refused[k] || x.tried[k]+x.inFlight[k] >= 2*MinStrikes {
			continue
		}
		if n := x.struck[k] + x.inFlight[k]; n < fewest {
			least, fewest = k, n
		}
	}
	return least
}

// settling is how long settling the regions regs is expected to take: each region's
// reruns (Confirm per design), each as long as rerunEstimate says, at as many at once as
// ran on average since the exploration started (the limit is what may run, not what
// did), and as long again for its shrink.
func (x *explorer) settling(regs ...*Finding) time.Duration {
	sales, took := x.clock.total()
	if sales == 0 || len(regs) == 0 {
		return 0
	}
	var reruns time.Duration
	for _, fd := range regs {
		reruns += x.rerunEstimate(fd)
	}
	atOnce := max(1, float64(took)/float64(time.Since(x.start)))
	return time.Duration(2 * float64(x.cfg.Confirm*len(x.cfg.Designs)) * float64(reruns) / atOnce)
}

// rerunEstimate is how long a rerun of fd's sale is expected to take: as long as its
// first sale took (the sales that find something run longer than most: their faults and
// their work outlast a TTL), or the exploration's mean sale if longer, times what the
// reruns measured so far took against their own estimates (learnt).
func (x *explorer) rerunEstimate(fd *Finding) time.Duration {
	return time.Duration(float64(x.firstEstimate(fd)) * x.learnt.factor())
}

// firstEstimate is rerunEstimate before the learning.
func (x *explorer) firstEstimate(fd *Finding) time.Duration {
	sales, took := x.clock.total()
	est := fd.FirstRun.Spent.Total()
	if sales > 0 {
		est = max(est, took/time.Duration(sales))
	}
	return est
}

// learnt is what the reruns measured so far took against the estimates made of them
// before the learning: settling scales its estimates by their ratio once a few reruns
// have ended, so that the stop rule follows what measuring costs on this machine, not
// only what each region's first sale took.
type learnt struct {
	mu              sync.Mutex
	took, estimated time.Duration
	n               int
}

// learnFrom is how many reruns the ratio waits for; factorLow and factorHigh bound it.
const (
	learnFrom             = 4
	factorLow, factorHigh = 0.2, 5.0
)

func (l *learnt) add(took, estimated time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.took += took
	l.estimated += estimated
	l.n++
}

// factor is the ratio, 1 until learnFrom reruns have ended.
func (l *learnt) factor() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n < learnFrom || l.estimated <= 0 {
		return 1
	}
	return min(max(float64(l.took)/float64(l.estimated), factorLow), factorHigh)
}

// regions are the findings of every region found so far.
func (x *explorer) regions() []*Finding {
	var out []*Finding // nil for none, as explore.json has always written it
	for _, reg := range x.order {
		out = append(out, x.found[reg])
	}
	return out
}

// pending is a draw whose sales are under way: done is closed once every design's has
// ended, out then holding them.
type pending struct {
	g    gene
	out  []result
	done chan struct{}
}

// launch starts draw g's sale on every design, side by side, and calls free once all
// have ended.
func (x *explorer) launch(g gene, free func()) *pending {
	p := &pending{g: g, out: make([]result, len(x.cfg.Designs)), done: make(chan struct{})}
	first := len(x.drawn) * len(x.cfg.Designs)
	var wg sync.WaitGroup
	for d, base := range x.cfg.Designs {
		s := x.cfg.Space.apply(base, g)
		wg.Go(func() {
			run, err := x.run(x.sctx, Searching, s, first+d)
			p.out[d] = result{s, run, err}
		})
	}
	go func() {
		wg.Wait()
		free()
		close(p.done)
	}()
	return p
}

// result is one design's sale of a draw, and how it ended.
type result struct {
	sale results.Sale
	run  results.Run
	err  error
}

// absorb counts a draw's sales, one per design, into the coverage and the findings, and
// reports whether the draw found a signature or reached a feature none had before: one
// the search should mutate. A draw a design refused counts as refused, nothing more.
func (x *explorer) absorb(out []result) (novel bool) {
	if slices.ContainsFunc(out, func(r result) bool { return errors.Is(r.err, ErrRefused) }) {
		x.rep.Refused++
		if plan, _ := faults.Parse(out[0].sale.Faults); len(plan) == 1 {
			x.refused[plan[0].Kind] = true
		}
		return false
	}
	x.rep.Draws++
	struck := map[faults.Kind]bool{}
	defer func() {
		for k := range struck {
			x.struck[k]++
		}
	}()
	for d, res := range out {
		if res.err != nil {
			x.rep.Unfinished++
			continue
		}
		for _, k := range x.rep.cover(&res.sale, &res.run) {
			struck[k] = true
		}
		for _, f := range features(&res.sale, &res.run) {
			if !x.seen[f] {
				x.seen[f], novel = true, true
			}
		}
		kinds := findings(&res.run)
		if len(kinds) == 0 {
			continue
		}
		reg := region{faultShape(res.sale.Faults), Timing(&res.sale)}
		fd := x.found[reg]
		if fd == nil {
			fd = &Finding{Faults: reg.faults, Timing: reg.timing, First: res.sale, FirstRun: res.run, FirstDesign: d, Seen: map[string][]int{}}
			x.found[reg] = fd
			x.order = append(x.order, reg)
		}
		for _, k := range kinds {
			if fd.Seen[k] == nil {
				fd.Seen[k] = make([]int, len(x.cfg.Designs))
				novel = true
				x.signatures++
				x.newest = Signature{k, reg.faults, reg.timing}
			}
			fd.Seen[k][d]++
		}
	}
	return novel
}

// next is the next draw: every other draw while a fault has struck in fewer than
// MinStrikes draws, a fresh draw of the least struck; else a mutation of a draw of the
// corpus, most often, once there is one; a fresh draw otherwise.
func (x *explorer) next(r *rand.Rand) gene {
	if k := x.leastStruck(); k != "" && len(x.drawn)%2 == 0 {
		return x.cfg.Space.drawWith(r, k)
	}
	if len(x.corpus) > 0 && r.Float64() < 0.6 {
		return x.cfg.Space.mutate(x.corpus[r.IntN(len(x.corpus))], r)
	}
	return x.cfg.Space.draw(r)
}

// run runs one sale of phase p under ctx (x.sctx, or a shrink's shorter one), counting
// it and where its time went.
func (x *explorer) run(ctx context.Context, p Phase, s results.Sale, slot int) (results.Run, error) {
	began := time.Now()
	run, err := x.cfg.Run(ctx, s, slot)
	if err == nil && !run.Complete {
		err = errors.New("cut short")
	}
	if errors.Is(err, ErrRefused) {
		return run, err
	}
	x.clock.sale(p, time.Since(began), run.Spent)
	if x.cfg.Verbose != nil {
		x.cfg.Verbose(fmt.Sprintf("explore: %s: %s, faults %s, seed %s: %s", p, s.Design, or(s.Faults, "none"), s.Get("seed"), run.Spent))
	}
	return run, err
}

func (x *explorer) progress(phase string) string {
	sales := x.clock.sales()
	left := max(time.Until(x.deadline), 0).Round(time.Second)
	line := fmt.Sprintf("explore: %s, %s left: %d draws, %d sales, %d signatures", phase, left, x.rep.Draws, sales, x.signatures)
	if x.signatures > 0 {
		line += "; newest: " + x.newest.String()
	}
	return line
}

// settle shrinks each region's finding and measures its rates for every design, the
// most promising first (a kind seen for one design and not another, then the most
// severe), until the deadline. Regions overlap: the next one starts its shrink once the
// one before it has all its reruns under way, so that a region's longest rerun does not
// hold the slots its shorter ones freed, and the limiter, not the order, sets how many
// sales run at once.
func (x *explorer) settle(ctx context.Context) {
	order := slices.DeleteFunc(slices.Clone(x.order), func(reg region) bool { return x.found[reg].Rates != nil }) // settled in a round before
	slices.SortStableFunc(order, func(a, b region) int {
		return cmp.Compare(x.found[b].promise(), x.found[a].promise())
	})
	var wg sync.WaitGroup
	for i, reg := range order {
		if time.Now().After(x.deadline) || ctx.Err() != nil {
			break
		}
		launched := make(chan struct{})
		wg.Go(func() {
			x.settleOne(ctx, x.found[reg], len(order)-i, sync.OnceFunc(func() { close(launched) }))
			x.cfg.Progress(x.progress("settling"))
		})
		<-launched
	}
	wg.Wait()
}

// settleOne shrinks fd's first sale on the design that showed it, keeping a smaller
// sale while every one of Tries runs shows its most promising kind of finding again (a
// sale that shows it now and then would measure a lower rate than the draw did), then
// reruns the smallest sale Confirm times for every design, counting every kind. The
// shrink takes what this region's share of the time left (left regions to settle, this
// one included) leaves after its expected reruns, and at most a minute or a third of
// the time left: every region gets measured, the most promising first. launched is
// called once every rerun has its slot (or none will): the next region may start.
func (x *explorer) settleOne(ctx context.Context, fd *Finding, left int, launched func()) {
	defer launched()
	fd.Target = fd.target()
	shrinking := x.clock.enter(Shrinking)
	share := time.Until(x.deadline) / time.Duration(left)
	shrinkBy := time.Now().Add(min(time.Until(x.deadline)/3, time.Minute, max(0, share-x.settling(fd)/2)))
	earns := func(ctx context.Context, s results.Sale) (results.Run, bool) {
		var last results.Run
		for range x.cfg.Tries {
			if !x.lim.acquire(ctx, 1) {
				return results.Run{}, false
			}
			run, err := x.run(ctx, Shrinking, s, 0)
			x.lim.release(1)
			if err != nil || !slices.Contains(findings(&run), fd.Target) {
				return results.Run{}, false
			}
			last = run
		}
		return last, true
	}
	// The draw's sale of the design that showed the target most: paired sales share
	// every setting but the design.
	seen := fd.Seen[fd.Target]
	d := slices.Index(seen, slices.Max(seen))
	first := x.onDesign(fd.First, d)
	// A sale still going when the shrink's time is up is cut short, not waited for: the
	// reruns that measure the finding must start before the budget ends.
	sctx, cancel := context.WithDeadline(x.sctx, shrinkBy)
	small, _, tried := Shrink(sctx, first, fd.FirstRun, earns, shrinkBy, x.lim.now())
	cancel()
	shrinking()
	defer x.clock.enter(Measuring)()
	fd.Smallest, fd.ShrinkSales, fd.Shrunk = small, tried, ctx.Err() == nil && time.Now().Before(shrinkBy)
	fd.Rates = make([]Rate, len(x.cfg.Designs))
	for d := range x.cfg.Designs {
		fd.Rates[d] = Rate{Design: x.rep.Designs[d], Shown: map[string]int{}}
	}
	type job struct{ d, k int }
	var jobs []job
	for k := range x.cfg.Confirm {
		for d := range x.cfg.Designs {
			jobs = append(jobs, job{d, k})
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, jb := range jobs {
		if time.Now().After(x.deadline) || !x.lim.acquire(ctx, 1) {
			break
		}
		s := x.onDesign(small, jb.d)
		s.Set("seed", strconv.FormatUint(results.DrawSeed(small.Seed(), jb.k), 10))
		wg.Go(func() {
			defer x.lim.release(1)
			began := time.Now()
			run, err := x.run(x.sctx, Measuring, s, 0)
			if err != nil {
				return
			}
			x.learnt.add(time.Since(began), x.firstEstimate(fd))
			mu.Lock()
			fd.Rates[jb.d].add(&run)
			mu.Unlock()
		})
	}
	launched()
	wg.Wait()
}

// findings are the kinds of finding of run that tell of harm or a broken promise: a
// release that found its lease gone (EXPIRED-AT-RELEASE) is the design seeing an
// outlived lease, a lifecycle event the search steers by, not a finding.
func findings(run *results.Run) []string {
	paced := pacedKinds(run)
	return slices.DeleteFunc(results.FindingKinds(run.Verdict), func(k string) bool { return k == "EXPIRED-AT-RELEASE" || slices.Contains(paced, k) })
}

// pacedKinds are the kinds of finding of run that the sale's own pace explains rather
// than the design, the premise the exit rule's OUTPACED checks (results.Run.Outpaced):
// UNSOLD stock as sales went on until the buyers' patience ran out, no lock left behind
// (results.Run.SoldToPatience), with or without a fault. Both designs of a pair leave it
// alike on a busy machine, so a search that measured it spent its budget on its own pace.
func pacedKinds(run *results.Run) []string {
	if !run.SoldToPatience() {
		return nil
	}
	return []string{unsold}
}

// unsold is the kind of finding of stock left on the shelf (oracle's UNSOLD n).
const unsold = "UNSOLD"

// onDesign is sale s with design d of the exploration in place of its own.
func (x *explorer) onDesign(s results.Sale, d int) results.Sale {
	design := x.cfg.Designs[d]
	s = s.Clone()
	s.Design, s.Source, s.Redis = design.Design, design.Source, design.Redis
	return s.Clone()
}
