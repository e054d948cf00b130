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
	"sync"
	"time"

	"github.com/stockbench/stockbench/results"
)

// ErrRefused marks a runner's error for a drawn sale that its design or its checks
// refuse (a fault the design takes no part in, a setting out of range): the draw is
// passed over, not a failure.
var ErrRefused = errors.New("refused")

// Runner runs one sale and returns its run; slot numbers it among the sales running at
// once, for a key prefix of its own.
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
	// Parallel is how many sales run at once, each on servers of its own. Default 4.
	Parallel int
	// Confirm is how many times each finding's smallest sale is rerun for every design,
	// for its rate. Default 10.
	Confirm int
	// Tries is how many runs a smaller sale gets to show a finding again before a
	// shrink judges that it does not. Default 2.
	Tries int
	// Run runs a sale.
	Run Runner
	// Progress, when set, is given a line of what has been found and the time left
	// every few draws.
	Progress func(string)
}

// Defaults of Config.
const (
	DefaultBudget   = 10 * time.Minute
	DefaultParallel = 4
	DefaultConfirm  = 10
	// Alpha is the family-wise error rate of the comparisons between designs, held by
	// Holm's correction over every signature and pair: the chance that an exploration of
	// a design against itself reports any difference.
	Alpha = 0.05
	// searchShare is the share of the budget the search takes; shrinking and measuring
	// the findings take the rest.
	searchShare = 0.55
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
	x := &explorer{cfg: cfg, start: time.Now(), rep: newReport(cfg), seen: map[string]bool{}, found: map[Signature]*Finding{}}
	x.deadline = x.start.Add(cfg.Budget)
	x.search(ctx, x.start.Add(time.Duration(float64(cfg.Budget)*searchShare)))
	x.settle(ctx)
	x.rep.finish(x, ctx.Err() != nil)
	return x.rep, nil
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
	return c
}

// explorer is one exploration's state.
type explorer struct {
	cfg             Config
	start, deadline time.Time
	rep             *Report
	mu              sync.Mutex
	sales           int // sales run, every phase
	// corpus is the draws that found something or reached a feature none had before,
	// which later draws mutate; seen is every feature reached.
	corpus []gene
	seen   map[string]bool
	// found is each signature's finding, in order is the order they were first seen.
	found map[Signature]*Finding
	order []Signature
}

// search draws batch after batch of Parallel sales until the deadline: each draw's
// sale for every design, run side by side. A batch is drawn from what the batches before
// it found, so that a seed gives the same draws for the same outcomes.
func (x *explorer) search(ctx context.Context, until time.Time) {
	r := rand.New(rand.NewPCG(x.cfg.Seed, 0x5eed))
	perBatch := max(1, x.cfg.Parallel/len(x.cfg.Designs))
	for batch := 0; time.Now().Before(until) && ctx.Err() == nil; batch++ {
		genes := make([]gene, perBatch)
		for i := range genes {
			genes[i] = x.next(r)
		}
		type result struct {
			sale results.Sale
			run  results.Run
			err  error
		}
		out := make([][]result, perBatch)
		var wg sync.WaitGroup
		for i, g := range genes {
			out[i] = make([]result, len(x.cfg.Designs))
			for d, base := range x.cfg.Designs {
				s := x.cfg.Space.apply(base, g)
				wg.Go(func() {
					run, err := x.run(ctx, s, i*len(x.cfg.Designs)+d)
					out[i][d] = result{s, run, err}
				})
			}
		}
		wg.Wait()
		if ctx.Err() != nil {
			return // a batch cut short says nothing of its draws
		}
		for i, g := range genes {
			if slices.ContainsFunc(out[i], func(r result) bool { return errors.Is(r.err, ErrRefused) }) {
				x.rep.Refused++
				continue
			}
			x.rep.Draws++
			newFeature := false
			for d, res := range out[i] {
				if res.err != nil {
					x.rep.Unfinished++
					continue
				}
				x.rep.cover(&res.sale, &res.run)
				for _, f := range features(&res.sale, &res.run) {
					if !x.seen[f] {
						x.seen[f], newFeature = true, true
					}
				}
				for _, sig := range signatures(&res.sale, &res.run) {
					fd := x.found[sig]
					if fd == nil {
						fd = &Finding{Signature: sig, First: res.sale, FirstRun: res.run, FirstDesign: d, Seen: make([]int, len(x.cfg.Designs))}
						x.found[sig] = fd
						x.order = append(x.order, sig)
						newFeature = true
					}
					fd.Seen[d]++
				}
			}
			if newFeature {
				x.corpus = append(x.corpus, g)
			}
		}
		if batch%3 == 2 {
			x.cfg.Progress(x.progress("searching"))
		}
	}
}

// next is the next draw: a mutation of a draw of the corpus, most often, once there is
// one; a fresh draw otherwise.
func (x *explorer) next(r *rand.Rand) gene {
	if len(x.corpus) > 0 && r.Float64() < 0.6 {
		return x.cfg.Space.mutate(x.corpus[r.IntN(len(x.corpus))], r)
	}
	return x.cfg.Space.draw(r)
}

// run runs one sale, counting it.
func (x *explorer) run(ctx context.Context, s results.Sale, slot int) (results.Run, error) {
	run, err := x.cfg.Run(ctx, s, slot)
	if !errors.Is(err, ErrRefused) {
		x.mu.Lock()
		x.sales++
		x.mu.Unlock()
	}
	return run, err
}

func (x *explorer) progress(phase string) string {
	x.mu.Lock()
	sales := x.sales
	x.mu.Unlock()
	left := max(time.Until(x.deadline), 0).Round(time.Second)
	line := fmt.Sprintf("explore: %s, %s left: %d draws, %d sales, %d signatures", phase, left, x.rep.Draws, sales, len(x.order))
	if n := len(x.order); n > 0 {
		line += "; newest: " + x.order[n-1].String()
	}
	return line
}

// settle shrinks each distinct finding and measures its rate for every design, the
// most promising first (those seen for one design and not another, then the most
// severe), until the deadline. Several run side by side.
func (x *explorer) settle(ctx context.Context) {
	order := slices.Clone(x.order)
	slices.SortStableFunc(order, func(a, b Signature) int {
		return cmp.Compare(x.found[b].promise(), x.found[a].promise())
	})
	per := max(1, x.cfg.Parallel/len(x.cfg.Designs))
	slots := make(chan int, per)
	for i := range per {
		slots <- i
	}
	var wg sync.WaitGroup
	for _, sig := range order {
		if time.Now().After(x.deadline) || ctx.Err() != nil {
			break
		}
		slot := <-slots
		fd := x.found[sig]
		wg.Go(func() {
			defer func() { slots <- slot }()
			x.settleOne(ctx, fd, slot)
		})
	}
	wg.Wait()
}

// settleOne shrinks fd's first sale on the design that showed it, keeping a smaller
// sale while one of Tries runs shows the same kind of finding, then reruns the smallest
// sale Confirm times for every design.
func (x *explorer) settleOne(ctx context.Context, fd *Finding, slot int) {
	base := slot * len(x.cfg.Designs)
	// A finding gets its share of what is left, a third of it for the shrink.
	left := time.Until(x.deadline)
	shrinkBy := time.Now().Add(left / 3)
	earns := func(ctx context.Context, s results.Sale) (results.Run, bool) {
		for range x.cfg.Tries {
			run, err := x.run(ctx, s, base)
			if err == nil && slices.Contains(results.FindingKinds(run.Verdict), fd.Signature.Finding) {
				return run, true
			}
			if err != nil && errors.Is(err, ErrRefused) {
				break
			}
		}
		return results.Run{}, false
	}
	small, _, tried := Shrink(ctx, fd.First, fd.FirstRun, earns, shrinkBy)
	fd.Smallest, fd.ShrinkSales, fd.Shrunk = small, tried, ctx.Err() == nil
	fd.Rates = make([]Rate, len(x.cfg.Designs))
	for d, design := range x.cfg.Designs {
		fd.Rates[d].Design = design.Design
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	for d, design := range x.cfg.Designs {
		s := small.Clone()
		s.Design, s.Source, s.Redis = design.Design, design.Source, design.Redis
		wg.Go(func() {
			seed := small.Seed()
			for k := range x.cfg.Confirm {
				if ctx.Err() != nil || time.Now().After(x.deadline.Add(time.Minute)) {
					return
				}
				s := s.Clone()
				s.Set("seed", fmt.Sprint(results.DrawSeed(seed, k)))
				run, err := x.run(ctx, s, base+d)
				if err != nil {
					continue
				}
				mu.Lock()
				fd.Rates[d].add(&run, fd.Signature.Finding)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
