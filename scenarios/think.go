package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Think is how long a lock holder works between reading the stock and writing it back,
// drawn per buyer from a distribution. Draws depend only on the seed and the buyer, so a
// run repeats with the same seed whatever order buyers happen to run in.
//
// Written forms, as ParseThink reads them and String writes them:
//
//	2ms                      fixed
//	uniform:1ms-3ms          uniform between the two
//	longtail:1ms,1500ms,0.01 1ms, except that a share of 0.01 of holders take 1500ms
//
// The long tail is two-valued on purpose: it states plainly how many holders outlast the
// lock's TTL, which is the condition that breaks TTL locks.
type Think struct {
	dist      distribution
	base, alt time.Duration
	p         float64
}

// distribution is the shape of a Think, by the name its written form gives it.
type distribution string

const (
	fixed    distribution = "fixed"
	uniform  distribution = "uniform"
	longTail distribution = "longtail"
)

// Fixed returns a Think of exactly d.
func Fixed(d time.Duration) Think { return Think{dist: fixed, base: d} }

// Uniform returns a Think drawn uniformly between lo and hi.
func Uniform(lo, hi time.Duration) Think { return Think{dist: uniform, base: lo, alt: max(lo, hi)} }

// LongTail returns a Think of base, except that a share of holders (between 0 and 1)
// take slow: the two-valued tail that states plainly how many outlast a TTL.
func LongTail(base, slow time.Duration, share float64) Think {
	return Think{dist: longTail, base: base, alt: slow, p: min(max(share, 0), 1)}
}

// IsZero reports whether t is the zero Think, which a sale reads as Fixed(0).
func (t Think) IsZero() bool { return t == Think{} }

// ParseThink reads a Think from its written form.
func ParseThink(s string) (Think, error) {
	name, args, found := strings.Cut(s, ":")
	kind := distribution(name)
	if !found {
		kind, args = fixed, s
	}
	bad := func(err error) (Think, error) {
		return Think{}, fmt.Errorf("think %q: %w (forms: 2ms, uniform:1ms-3ms, longtail:1ms,1500ms,0.01)", s, err)
	}
	switch kind {
	case fixed:
		d, err := parseNonNegative(args)
		if err != nil {
			return bad(err)
		}
		return Fixed(d), nil
	case uniform:
		lo, hi, ok := strings.Cut(args, "-")
		if !ok {
			return bad(fmt.Errorf("want LOW-HIGH"))
		}
		a, err := parseNonNegative(lo)
		if err != nil {
			return bad(err)
		}
		b, err := parseNonNegative(hi)
		if err != nil {
			return bad(err)
		}
		if b < a {
			return bad(fmt.Errorf("high below low"))
		}
		return Uniform(a, b), nil
	case longTail:
		parts := strings.Split(args, ",")
		if len(parts) != 3 {
			return bad(fmt.Errorf("want BASE,SLOW,SHARE"))
		}
		a, err := parseNonNegative(parts[0])
		if err != nil {
			return bad(err)
		}
		b, err := parseNonNegative(parts[1])
		if err != nil {
			return bad(err)
		}
		p, err := strconv.ParseFloat(parts[2], 64)
		if err != nil || !(p >= 0 && p <= 1) { // NaN is neither
			return bad(fmt.Errorf("share must be between 0 and 1"))
		}
		return LongTail(a, b, p), nil
	}
	return bad(fmt.Errorf("unknown distribution %q", name))
}

func parseNonNegative(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %s", s)
	}
	return d, nil
}

// String returns the written form.
func (t Think) String() string {
	switch t.dist {
	case uniform:
		return fmt.Sprintf("uniform:%s-%s", t.base, t.alt)
	case longTail:
		return fmt.Sprintf("longtail:%s,%s,%g", t.base, t.alt, t.p)
	}
	return t.base.String()
}

// Longest is the longest think time t draws.
func (t Think) Longest() time.Duration {
	if t.dist == longTail && t.p == 0 {
		return t.base
	}
	return max(t.base, t.alt)
}

// Draw returns buyer's think time under seed.
func (t Think) Draw(seed uint64, buyer int) time.Duration {
	switch t.dist {
	case uniform:
		return t.base + time.Duration(unit(seed, buyer)*float64(t.alt-t.base))
	case longTail:
		if unit(seed, buyer) < t.p {
			return t.alt
		}
	}
	return t.base
}

// unit maps (seed, buyer) to [0, 1) with splitmix64: no shared generator, no lock.
func unit(seed uint64, buyer int) float64 {
	z := seed + uint64(buyer+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
