package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Fault is one thing that goes wrong during a sale. Zero settings take the defaults.
type Fault struct {
	Kind Kind
	// Nth is the victim: the Nth buyer to get the lock (for a lock-free design, to start
	// a purchase; for a queue, the Nth task taken). Default: DefaultNth.
	Nth int
	// For is how long a pause, slow work or outage lasts. Default: DefaultLength times
	// the sale's TTL (a queue's visibility timeout).
	For time.Duration
	// Latency and Jitter shape NetLatency. Defaults: DefaultLatency and DefaultJitter.
	Latency, Jitter time.Duration
	// Count is how many workers a worker crash takes. Default: DefaultCount.
	Count int
}

func (f Fault) nth() int               { return cmpOr(f.Nth, DefaultNth) }
func (f Fault) count() int             { return cmpOr(f.Count, DefaultCount) }
func (f Fault) latency() time.Duration { return cmpOr(f.Latency, DefaultLatency) }
func (f Fault) jitter() time.Duration  { return cmpOr(f.Jitter, DefaultJitter) }

// lasting returns For, or DefaultLength times ttl.
func (f Fault) lasting(ttl time.Duration) time.Duration {
	return cmpOr(f.For, time.Duration(float64(ttl)*DefaultLength))
}

// cmpOr is v when set (positive), else def.
func cmpOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// AsDocumented reports whether f's settings leave its meaning as designs document their
// verdicts under it: choosing another victim (nth) or more of them (count) does; making
// it last longer or the network slower (for, latency, jitter) does not.
func (f Fault) AsDocumented() bool { return f.For == 0 && f.Latency == 0 && f.Jitter == 0 }

// String is the written form Parse reads.
func (f Fault) String() string {
	s := string(f.Kind)
	for _, kv := range []struct {
		key string
		set bool
		val string
	}{
		{"nth", f.Nth > 0, strconv.Itoa(f.Nth)},
		{"for", f.For > 0, f.For.String()},
		{"latency", f.Latency > 0, f.Latency.String()},
		{"jitter", f.Jitter > 0, f.Jitter.String()},
		{"count", f.Count > 0, strconv.Itoa(f.Count)},
	} {
		if kv.set {
			s += ":" + kv.key + "=" + kv.val
		}
	}
	return s
}

// Plan is the faults of one sale; they combine.
type Plan []Fault

// String is the written form Parse reads; None for an empty plan.
func (p Plan) String() string {
	if len(p) == 0 {
		return None
	}
	parts := make([]string, len(p))
	for i, f := range p {
		parts[i] = f.String()
	}
	return strings.Join(parts, "+")
}

// Among returns the first fault of p whose name is in names: a design's faults it cannot
// take part in (lockimpl.Impl.Outside).
func (p Plan) Among(names []string) (Kind, bool) {
	for _, f := range p {
		if slices.Contains(names, string(f.Kind)) {
			return f.Kind, true
		}
	}
	return "", false
}

// Has reports whether p includes a fault of kind k.
func (p Plan) Has(k Kind) bool {
	return slices.ContainsFunc(p, func(f Fault) bool { return f.Kind == k })
}

// AppliesTo reports whether every fault of p applies to sales of a, and names the first
// that does not.
func (p Plan) AppliesTo(a Applies) (Kind, bool) {
	for _, f := range p {
		if spec(f.Kind).Applies&a == 0 {
			return f.Kind, false
		}
	}
	return "", true
}

// Needs returns what p needs: what any of its faults needs.
func (p Plan) Needs() Needs {
	var n Needs
	for _, f := range p {
		n = n.or(spec(f.Kind).Needs)
	}
	return n
}

// Parse reads a plan: faults joined by "+", each a kind with optional settings, as in
// "client-pause", "redis-pause:for=3s", "slow-work:nth=2+net-latency:latency=5ms".
// None or "" is the empty plan.
func Parse(spec string) (Plan, error) {
	if spec == "" || spec == None {
		return nil, nil
	}
	var p Plan
	for part := range strings.SplitSeq(spec, "+") {
		f, err := parseFault(part)
		if err != nil {
			return nil, err
		}
		if p.Has(f.Kind) {
			return nil, fmt.Errorf("fault %q named twice", f.Kind)
		}
		p = append(p, f)
	}
	return p, nil
}

func parseFault(s string) (Fault, error) {
	fields := strings.Split(s, ":")
	f := Fault{Kind: Kind(fields[0])}
	if _, ok := Lookup(f.Kind); !ok {
		return f, fmt.Errorf("unknown fault %q (known: %s)", fields[0], kindList())
	}
	for _, kv := range fields[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return f, fmt.Errorf("fault %s: setting %q is not key=value", f.Kind, kv)
		}
		var err error
		switch k {
		case "nth":
			f.Nth, err = atLeastOne(v)
		case "for":
			f.For, err = positive(v)
		case "latency":
			f.Latency, err = positive(v)
		case "jitter":
			f.Jitter, err = positive(v)
		case "count":
			f.Count, err = atLeastOne(v)
		default:
			err = fmt.Errorf("unknown setting (settings: nth, for, latency, jitter, count)")
		}
		if err != nil {
			return f, fmt.Errorf("fault %s: %s=%s: %w", f.Kind, k, v, err)
		}
	}
	return f, nil
}

func atLeastOne(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n < 1 {
		err = fmt.Errorf("must be at least 1")
	}
	return n, err
}

func positive(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = fmt.Errorf("must be positive")
	}
	return d, err
}

func kindList() string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = string(s.Kind)
	}
	return strings.Join(names, ", ")
}
