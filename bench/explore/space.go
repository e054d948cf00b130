package explore

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// The space's values. Each is a list a draw picks one from, so that draws land on
// values a person would type, and a signature's timing relation is read off them. Sales
// are kept small (a draw is worth more than a long sale): what a sale must last is
// bounded by longest below.
var (
	// fineTTLs are the leases of a space whose designs all keep them to the millisecond
	// (Space.Fine); a 200 ms lease is still many round trips and scheduler ticks, and much
	// below it a loaded machine's pauses would be the finding.
	fineTTLs   = []time.Duration{200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond}
	workRatios = []float64{0.001, 0.01, 0.1, 0.3, 0.6, 0.9, 1.2, 1.6} // a holder's work, in TTLs
	buyerss    = []int{2, 4, 8, 16, 32, 64, 100}
	stockPer   = []float64{0.25, 0.5, 1, 2} // units per buyer
	retries    = []time.Duration{5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond}
	patiences  = []float64{2, 0.5} // how long a buyer tries, in what the sale should take
	appss      = []int{1, 2, 4}
	nodess     = []int{3, 5, 7} // an adapter's lock servers, where it takes several
	nths       = []int{1, 2, 5}
	lengths    = []float64{0.5, 1.5, 3} // a fault's length, in TTLs (visibility timeouts)
	counts     = []int{1, 3}
	shares     = []float64{0.05, 0.2}

	visibilities = []time.Duration{200 * time.Millisecond, 500 * time.Millisecond, time.Second}
	workerss     = []int{1, 2, 4, 8}
)

// longest is about how long a drawn sale may keep its holders (or workers) busy: a draw
// past it sells fewer units.
const longest = 6 * time.Second

// wholeTTL is the lease of a space with a design that keeps its leases in whole seconds
// (EX, EXPIRE): one second, the shortest such a design keeps exactly. A sub-second TTL
// would compare an EX-based design's rounding with a PX-based design's lease, not the
// designs; 2 or 3 s would draw the same timings (work and faults are drawn in TTLs) in
// two or three times as long.
const wholeTTL = time.Second

// fine is how many times shorter the other times of a lock sale are (the retry interval,
// the buyers' patience, the floor of a holder's work) in a space whose designs all keep
// their leases to the millisecond (Space.Fine), whose leases are fineTTLs: the same sale,
// as the timings relate, in a fraction of the time.
const fine = 5

// Space is what an explorer draws sales from: the faults the fault table says apply to
// the designs' kind of sale, with each one's knobs (faults.Spec.Knobs), and the sale's
// own dimensions above.
type Space struct {
	Kind   results.SaleKind
	Faults []faults.Kind
	// Fine: every design keeps its leases to the millisecond (not lockimpl.Impl.Seconds),
	// so a lock sale's times are drawn shorter: TTLs of 200, 400 and 600 ms (fineTTLs),
	// the other times a fifth as long (fine). Default false: a TTL of one second
	// (wholeTTL), as an EX-based design needs to be compared.
	Fine bool
}

// NewSpace is the space of sales of kind: every fault of the table that applies to
// them (those on a Sentinel or Cluster topology only when infra), or only those of
// only when given.
func NewSpace(kind results.SaleKind, infra bool, only []faults.Kind) Space {
	a := faults.Locks
	if kind == results.QueueSale {
		a = faults.Queues
	}
	kinds := faults.Explorable(a, infra)
	if len(only) > 0 {
		kinds = slices.DeleteFunc(kinds, func(k faults.Kind) bool { return !slices.Contains(only, k) })
	}
	return Space{Kind: kind, Faults: kinds}
}

// gene is one draw's place in the space, as indices into the lists above, so that a
// mutation changes one dimension and leaves the others.
type gene struct {
	TTL, Work, Buyers, Stock, Retry, Patience, Apps, Nodes int
	LongTail                                               bool
	Workers, Fulfil                                        int // queue sales
	Faults                                                 []faultGene
	Seed                                                   uint64
}

type faultGene struct {
	Kind                              faults.Kind
	Nth, Length, Count, Choice, Share int // Share -1: one victim, not a rate
}

// draw is a fresh point of the space.
func (sp Space) draw(r *rand.Rand) gene {
	g := gene{
		TTL: r.IntN(len(fineTTLs)), Work: r.IntN(len(workRatios)), Buyers: r.IntN(len(buyerss)), Stock: r.IntN(len(stockPer)),
		Retry: r.IntN(len(retries)), Patience: pick(r, 0.8), Apps: r.IntN(len(appss)), Nodes: r.IntN(len(nodess)), LongTail: r.Float64() < 0.2,
		Workers: r.IntN(len(workerss)), Fulfil: r.IntN(2), Seed: r.Uint64() >> 1,
	}
	if sp.Kind == results.QueueSale {
		g.TTL = r.IntN(len(visibilities))
		g.Work = r.IntN(len(workRatios))
	}
	switch n := r.Float64(); {
	case len(sp.Faults) == 0 || n < 0.15:
	case n < 0.8 || len(sp.Faults) == 1:
		g.Faults = []faultGene{sp.fault(r)}
	default:
		a, b := sp.fault(r), sp.fault(r)
		for b.Kind == a.Kind {
			b = sp.fault(r)
		}
		g.Faults = []faultGene{a, b}
	}
	return g
}

// drawWith is a fresh point of the space whose fault is k, alone.
func (sp Space) drawWith(r *rand.Rand, k faults.Kind) gene {
	g := sp.draw(r)
	f := sp.fault(r)
	f.Kind = k
	g.Faults = []faultGene{f}
	return g
}

// pick is 0 with probability p, else 1.
func pick(r *rand.Rand, p float64) int {
	if r.Float64() < p {
		return 0
	}
	return 1
}

func (sp Space) fault(r *rand.Rand) faultGene {
	f := faultGene{Kind: sp.Faults[r.IntN(len(sp.Faults))], Nth: r.IntN(len(nths)), Length: r.IntN(len(lengths)),
		Count: r.IntN(len(counts)), Choice: r.IntN(4), Share: -1}
	if r.Float64() < 0.15 {
		f.Share = r.IntN(len(shares))
	}
	return f
}

// mutate is g with one or two of its dimensions drawn again: a neighbour of a draw that
// found something, or reached something new.
func (sp Space) mutate(g gene, r *rand.Rand) gene {
	g.Faults = slices.Clone(g.Faults)
	fresh := sp.draw(r)
	for range 1 + r.IntN(2) {
		switch r.IntN(9) {
		case 0:
			g.TTL = fresh.TTL
		case 1:
			g.Work, g.LongTail = fresh.Work, fresh.LongTail
		case 2:
			g.Buyers, g.Stock = fresh.Buyers, fresh.Stock
		case 3:
			g.Retry, g.Patience = fresh.Retry, fresh.Patience
		case 4:
			g.Apps, g.Workers, g.Fulfil, g.Nodes = fresh.Apps, fresh.Workers, fresh.Fulfil, fresh.Nodes
		case 5, 6: // a fault's knobs, or another fault
			if len(g.Faults) == 0 || len(sp.Faults) == 0 {
				g.Faults = fresh.Faults
				break
			}
			i := r.IntN(len(g.Faults))
			nf := sp.fault(r)
			if r.IntN(2) == 0 {
				nf.Kind = g.Faults[i].Kind
			}
			g.Faults[i] = nf
		case 7:
			g.Faults = fresh.Faults
		case 8:
			g.Seed = fresh.Seed
		}
	}
	return g
}

// apply is base, a design's sale, with g's settings: the same for every design of an
// exploration, so that their sales are paired.
func (sp Space) apply(base results.Sale, g gene) results.Sale {
	s := base.Clone()
	ttl := wholeTTL
	switch {
	case sp.Kind == results.QueueSale:
		ttl = visibilities[g.TTL]
	case sp.Fine:
		ttl = fineTTLs[g.TTL]
	}
	work := time.Duration(float64(ttl) * workRatios[g.Work]).Round(100 * time.Microsecond)
	buyers := buyerss[g.Buyers]
	stock := max(1, int(float64(buyers)*stockPer[g.Stock]))
	faultLen := time.Duration(0)
	var plan faults.Plan
	for _, fg := range g.Faults {
		f, d := fg.fault(ttl, buyers)
		plan = append(plan, f)
		faultLen = max(faultLen, d)
	}
	s.Faults = plan.String()
	s.Set("seed", strconv.FormatUint(g.Seed, 10))
	if sp.Kind == results.QueueSale {
		workers := workerss[g.Workers]
		stock = min(stock, max(1, int(longest/max(work, time.Millisecond))*workers))
		s.Set("buyers", strconv.Itoa(buyers))
		s.Set("stock", strconv.Itoa(stock))
		s.Set("visibility", ttl.String())
		s.Set("work", work.String())
		s.Set("workers", strconv.Itoa(workers))
		s.Set("fulfil", []string{"naive", "idempotent"}[g.Fulfil])
		return s
	}
	scale := time.Duration(1)
	if sp.Fine {
		scale = fine
	}
	stock = min(stock, max(1, int(longest/scale/max(work, time.Millisecond/scale))))
	think := scenarios.Fixed(work)
	if g.LongTail {
		think = scenarios.LongTail(time.Millisecond, work, 0.1)
	}
	// Patient buyers wait out every holder's work before them, and the fault; impatient
	// ones half of that, and leave stock unsold behind a slow holder.
	need := time.Duration(stock)*work + faultLen + 2*ttl + time.Second/scale
	timeout := min(max(time.Duration(float64(need)*patiences[g.Patience]), time.Second/scale), 40*time.Second/scale).Round(100 * time.Millisecond / scale)
	s.Set("buyers", strconv.Itoa(buyers))
	s.Set("stock", strconv.Itoa(stock))
	s.Set("ttl", ttl.String())
	s.Set("think", think.String())
	s.Set("retry-interval", max(retries[g.Retry]/scale, time.Millisecond).String())
	s.Set("timeout", timeout.String())
	if a := appss[g.Apps]; a > 1 {
		s.Set("apps", strconv.Itoa(a))
	}
	if s.Source != nil && s.Source.Nodes > 1 { // an adapter given several lock servers takes any odd count
		s.Source.Nodes = nodess[g.Nodes]
	}
	return s
}

// fault is the fault fg draws in a sale whose TTL (visibility timeout) is ttl, and how
// long it lasts.
func (fg faultGene) fault(ttl time.Duration, buyers int) (faults.Fault, time.Duration) {
	f := faults.Fault{Kind: fg.Kind}
	spec, _ := faults.Lookup(fg.Kind)
	length := time.Duration(float64(ttl) * faults.DefaultLength)
	for _, k := range spec.Knobs() {
		switch k.Key {
		case "nth":
			if fg.Share < 0 {
				f.Nth = min(nths[fg.Nth], buyers)
			}
		case "for":
			length = time.Duration(float64(ttl) * lengths[fg.Length])
			f.For = length
		case "by":
			f.By = time.Duration(float64(ttl) * lengths[fg.Length])
		case "count":
			f.Count = counts[fg.Count]
		case "mode":
			f.Mode = k.Choices[fg.Choice%len(k.Choices)]
		case "persist":
			f.Persist = faults.Persistence(k.Choices[fg.Choice%len(k.Choices)])
		case "p":
			if fg.Share >= 0 {
				f.P = shares[fg.Share]
			}
		}
	}
	return f, length
}

// Timing is how a sale's holders' work (a queue's workers') compares with its lease: the
// relation a finding of a lock shows under, which a person would otherwise have to guess.
func Timing(s *results.Sale) string {
	lease, work, unit := s.Get("ttl"), s.Get("think"), "TTL"
	if s.Kind == results.QueueSale {
		lease, work, unit = s.Get("visibility"), s.Get("work"), "visibility timeout"
	}
	l, err := time.ParseDuration(lease)
	if err != nil || l <= 0 {
		return "?"
	}
	t, err := scenarios.ParseThink(work) // a queue's work is a plain duration, which it reads too
	switch r := float64(t.Longest()) / float64(l); {
	case err != nil:
		return "?"
	case r >= 1:
		return "work >= " + unit
	case r >= 0.1:
		return "work < " + unit
	}
	return "work << " + unit
}
