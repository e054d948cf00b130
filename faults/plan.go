package faults

import (
	"cmp"
	"fmt"
	"math"
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
	// Servers is how many of a design's lock servers RedisPause or RedisRestart strikes
	// at once, the first ones: a minority or a majority of Redlock's. Default: 1.
	Servers int
	// P, when set, makes the fault strike at a rate: every victim of its kind (each
	// holder, purchase or task; each call for LatencySpike) with probability P, drawn
	// from the sale's seed, instead of the Nth alone. Default: 0, the Nth alone
	// (LatencySpike: DefaultSpikeShare).
	P float64
	// Dist is how each victim's length is drawn around For: Fixed, Exp (exponential,
	// mean For) or Pareto (shape 1.5, mean For, capped at 20 x For: the long tail of
	// stop-the-world pauses). Default: Fixed.
	Dist Dist
	// By is how far ClockJump moves the clock. Default: DefaultLength times the TTL.
	By time.Duration
	// Persist is how the server RedisRestart restarts keeps its data; the sale's server
	// runs in that mode from the start, so its cost shows in sales/s. Default: PersistNone,
	// a restart comes back empty.
	Persist Persistence
	// Step is where StepTerm strikes: a step the adapter names. Default: DefaultStep.
	Step string
	// Mode is the errors ServerErrors answers with: ModeOOM (the default), ModeReadonly
	// or ModeLoading.
	Mode string
	// Replica is when ClusterKill's replicas join the cluster: ReplicaListed (the
	// default) or ReplicaLate.
	Replica string
}

// The errors ServerErrors answers with.
const (
	// ModeOOM: OOM to writes, as at maxmemory with noeviction; reads answer.
	ModeOOM = "oom"
	// ModeReadonly: READONLY to writes, as a master demoted to a replica; reads answer.
	ModeReadonly = "readonly"
	// ModeLoading: LOADING to every command, as while the server loads its dataset
	// after a restart or a full sync; it comes back with what it saved, less what
	// expired meanwhile.
	ModeLoading = "loading"
)

// modes lists the modes, the default first.
var modes = []string{ModeOOM, ModeReadonly, ModeLoading}

// When ClusterKill's replicas join the cluster.
const (
	// ReplicaListed: before the sale, every master listing every replica in the slot
	// map (CLUSTER SLOTS) the buyers' clients build as they connect.
	ReplicaListed = "listed"
	// ReplicaLate: as the fault strikes, after the clients mapped the cluster without
	// them: a client that maps once learns of the replica only from the failover.
	ReplicaLate = "late"
)

// replicaTimes lists when the replicas may join, the default first.
var replicaTimes = []string{ReplicaListed, ReplicaLate}

// Dist is how a fault's length is drawn for each victim.
type Dist string

// The distributions.
const (
	Fixed  Dist = "fixed"
	Exp    Dist = "exp"
	Pareto Dist = "pareto"
)

// paretoShape is the Pareto distribution's shape: a finite mean, an infinite variance.
const paretoShape = 1.5

// draw is a length around mean, drawn from d at u (uniform in [0, 1)).
func (d Dist) draw(mean time.Duration, u float64) time.Duration {
	switch d {
	case Exp:
		return time.Duration(-math.Log(1-u) * float64(mean))
	case Pareto:
		scale := float64(mean) * (paretoShape - 1) / paretoShape
		return time.Duration(min(scale/math.Pow(1-u, 1/paretoShape), 20*float64(mean)))
	}
	return mean
}

func (f Fault) spike() time.Duration { return cmpOr(f.Latency, DefaultSpike) }

// rate is the share of victims f strikes, or 0 when it strikes the Nth alone.
func (f Fault) rate() float64 {
	if f.P == 0 && f.Kind == LatencySpike {
		return DefaultSpikeShare
	}
	return f.P
}

func (f Fault) nth() int               { return cmpOr(f.Nth, DefaultNth) }
func (f Fault) count() int             { return cmpOr(f.Count, DefaultCount) }
func (f Fault) latency() time.Duration { return cmpOr(f.Latency, DefaultLatency) }
func (f Fault) jitter() time.Duration  { return cmpOr(f.Jitter, DefaultJitter) }

// lasting returns For (a clock jump's By), or the fault's default length (DefaultLength)
// times ttl.
func (f Fault) lasting(ttl time.Duration) time.Duration {
	return cmpOr(f.For+f.By, time.Duration(float64(ttl)*cmp.Or(spec(f.Kind).length, DefaultLength)))
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
// it last longer or the network slower (for, latency, jitter) does not, nor does
// striking several lock servers (servers), which designs document for one.
//
// A rate (p) or a drawn length (dist) is a question of how often, not whether: no design
// documents a verdict under one. Nor under a restart that keeps data (persist): what it
// keeps depends on the mode and the moment. Nor at a step other than the default, which
// an adapter may not even name.
func (f Fault) AsDocumented() bool {
	return f.Servers <= 1 && f.For == 0 && f.By == 0 && f.Latency == 0 && f.Jitter == 0 && f.P == 0 && f.Dist == "" && f.Kind != LatencySpike &&
		(f.Persist == "" || f.Persist == PersistNone) && (f.Step == "" || f.Step == DefaultStep) && f.Mode == "" &&
		(f.Replica == "" || f.Replica == ReplicaListed)
}

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
		{"by", f.By > 0, f.By.String()},
		{"latency", f.Latency > 0, f.Latency.String()},
		{"jitter", f.Jitter > 0, f.Jitter.String()},
		{"count", f.Count > 0, strconv.Itoa(f.Count)},
		{"servers", f.Servers > 0, strconv.Itoa(f.Servers)},
		{"p", f.P > 0, strconv.FormatFloat(f.P, 'g', -1, 64)},
		{"dist", f.Dist != "", string(f.Dist)},
		{"persist", f.Persist != "", string(f.Persist)},
		{"step", f.Step != "", f.Step},
		{"mode", f.Mode != "", f.Mode},
		{"replica", f.Replica != "", f.Replica},
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

// OnlyRates reports whether every fault of p strikes at a rate (p=, or a latency spike)
// and inside the harness's own process, needing no server of its own nor a proxy: each
// victim is then drawn from its own number, so a sale split between processes draws the
// victims one process would (see scenarios.Shard).
func (p Plan) OnlyRates() bool {
	for _, f := range p {
		if f.rate() == 0 || spec(f.Kind).Needs != (Needs{}) {
			return false
		}
	}
	return true
}

// PerApp is the plan's first fault that strikes one application instance while the others
// go on (Needs.PerApp), if any.
func (p Plan) PerApp() (Kind, bool) {
	for _, f := range p {
		if spec(f.Kind).Needs.PerApp {
			return f.Kind, true
		}
	}
	return "", false
}

// Needs returns what p needs: what any of its faults needs.
func (p Plan) Needs() Needs {
	var n Needs
	for _, f := range p {
		n = n.or(spec(f.Kind).Needs)
		if f.Persist != "" && f.Persist != PersistNone {
			n.Persist = f.Persist
		}
		if f.Kind == ServerErrors && f.Mode == ModeLoading {
			n.Debug = true
		}
		if f.Kind == ClusterKill && f.Replica == ReplicaLate {
			n.LateReplicas = true
		}
		if f.Servers > 1 {
			n.AllLocks = true // the servers it strikes come fresh, as the first
		}
	}
	return n
}

// Servers is how many lock servers the plan's faults strike at once, at most: a design
// over fewer cannot take it (1 for a plan that strikes none or one).
func (p Plan) Servers() int {
	most := 1
	for _, f := range p {
		most = max(most, f.Servers)
	}
	return most
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
			if err == nil && f.Kind == ClockJump {
				err = fmt.Errorf("a clock jump lasts no time: by= says how far it goes")
			}
		case "by":
			f.By, err = positive(v)
			if err == nil && f.Kind != ClockJump {
				err = fmt.Errorf("only %s goes by an amount", ClockJump)
			}
		case "latency":
			f.Latency, err = positive(v)
		case "jitter":
			f.Jitter, err = positive(v)
		case "count":
			f.Count, err = atLeastOne(v)
		case "servers":
			f.Servers, err = atLeastOne(v)
			if err == nil && f.Kind != RedisPause && f.Kind != RedisRestart {
				err = fmt.Errorf("only %s and %s strike several lock servers at once", RedisPause, RedisRestart)
			}
		case "p":
			f.P, err = probability(v)
			if err == nil && !spec(f.Kind).Rated() {
				err = fmt.Errorf("%s strikes one victim or a server, not at a rate (rates: %s)", f.Kind, strings.Join(ratedKinds(), ", "))
			}
		case "dist":
			f.Dist = Dist(v)
			if f.Dist != Fixed && f.Dist != Exp && f.Dist != Pareto {
				err = fmt.Errorf("unknown distribution (known: %s, %s, %s)", Fixed, Exp, Pareto)
			}
		default:
			err = f.setNamed(k, v)
		}
		if err != nil {
			return f, fmt.Errorf("fault %s: %s=%s: %w", f.Kind, k, v, err)
		}
	}
	if f.Servers > 1 && f.Persist != "" && f.Persist != PersistNone {
		return f, fmt.Errorf("fault %s: servers=%d with persist=%s: only the first lock server runs with persistence", f.Kind, f.Servers, f.Persist)
	}
	return f, nil
}

// setNamed sets one of f's settings that name a choice (persist, step, mode, replica),
// checking it is f's kind's to take.
func (f *Fault) setNamed(k, v string) (err error) {
	switch k {
	case "persist":
		f.Persist, err = parsePersistence(v)
		if err == nil && f.Kind != RedisRestart {
			err = fmt.Errorf("only %s restarts a server with what it kept (%s restarts them empty)", RedisRestart, RollingRestart)
		}
	case "step":
		f.Step = v
		switch {
		case f.Kind != StepTerm:
			err = fmt.Errorf("only %s strikes at a step", StepTerm)
		case !stepName(v):
			err = fmt.Errorf("a step is a name of letters, digits and dashes")
		}
	case "mode":
		f.Mode = v
		switch {
		case f.Kind != ServerErrors:
			err = fmt.Errorf("only %s answers in a mode", ServerErrors)
		case !slices.Contains(modes, v):
			err = fmt.Errorf("unknown mode (modes: %s)", strings.Join(modes, ", "))
		}
	case "replica":
		f.Replica = v
		switch {
		case f.Kind != ClusterKill:
			err = fmt.Errorf("only %s has replicas that join late", ClusterKill)
		case !slices.Contains(replicaTimes, v):
			err = fmt.Errorf("unknown time (replica=%s)", strings.Join(replicaTimes, "|"))
		}
	default:
		err = fmt.Errorf("unknown setting (settings: nth, for, by, latency, jitter, count, servers, p, dist, persist, step, mode, replica)")
	}
	return err
}

// stepName reports whether s can name a step: what an adapter reports, as "dequeued".
func stepName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

func (f Fault) step() string { return cmp.Or(f.Step, DefaultStep) }
func (f Fault) mode() string { return cmp.Or(f.Mode, ModeOOM) }

func atLeastOne(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err == nil && n < 1 {
		err = fmt.Errorf("must be at least 1")
	}
	return n, err
}

func probability(s string) (float64, error) {
	p, err := strconv.ParseFloat(s, 64)
	if err == nil && !(p > 0 && p <= 1) { // NaN is neither
		err = fmt.Errorf("must be above 0 and at most 1")
	}
	return p, err
}

// ratedKinds names the faults that can strike at a rate.
func ratedKinds() []string {
	var names []string
	for _, s := range specs {
		if s.Rated() {
			names = append(names, string(s.Kind))
		}
	}
	return names
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
