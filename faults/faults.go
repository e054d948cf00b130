// Package faults describes what goes wrong during a sale and makes it happen: a lock holder
// that works too long, pauses or dies; the lock server paused, restarted empty or failed
// over; the network slowed or cut; lock keys evicted.
//
// Most faults happen to one holder, the victim: the Nth buyer to get the lock. A client
// fault changes what the victim does; a server or network fault is set off when the victim
// gets the lock, and the victim keeps working until it is over, as a holder in the middle
// of a long operation would. The verdicts are then repeatable: whether the lock lets a
// second buyer in while the victim still holds it decides whether the sale oversells.
package faults

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind names a fault.
type Kind string

// The faults.
const (
	// SlowWork: the victim works For (default 1.5x the TTL) between reading and writing
	// the stock; its process stays alive, so a watchdog keeps renewing.
	SlowWork Kind = "slow-work"
	// ClientPause: the victim's process stops for For (default 1.5x the TTL) after reading
	// the stock, as a stop-the-world pause would; its lease's renewals stop with it.
	ClientPause Kind = "client-pause"
	// CrashAcquire: the victim dies in the middle of taking the lock (between SETNX and
	// EXPIRE for designs that take two commands; right after the lock for the others).
	CrashAcquire Kind = "crash-acquire"
	// CrashHolder: the victim dies after reading the stock: no write, no release.
	CrashHolder Kind = "crash-holder"
	// RedisPause: the lock server stops for For (default 1.5x the TTL) while the victim
	// holds the lock (SIGSTOP, or docker pause).
	RedisPause Kind = "redis-pause"
	// RedisRestart: the lock server is killed and started again empty while the victim
	// holds the lock.
	RedisRestart Kind = "redis-restart"
	// Failover: the lock server's replica, detached before the sale's locks reached it,
	// takes the dead server's place while the victim holds the lock.
	Failover Kind = "failover"
	// NetLatency: every command between buyers and Redis is delayed by Latency (default
	// 2ms) plus up to Jitter (default 1ms), through toxiproxy.
	NetLatency Kind = "net-latency"
	// NetTimeout: the network between buyers and the lock server stops carrying data for
	// For (default 1.5x the TTL) while the victim holds the lock, through toxiproxy.
	NetTimeout Kind = "net-timeout"
	// Evict: the lock server runs out of memory under volatile-ttl eviction while a
	// writer fills it, so keys with the shortest TTL, the locks, are evicted first.
	Evict Kind = "evict"

	// WorkerCrash: Count workers (default 3), from the one that takes the Nth task, die
	// holding their task, before fulfilling it; each is replaced by a new worker.
	WorkerCrash Kind = "worker-crash"
	// WorkerCrashLate: as WorkerCrash, but after fulfilling the task, before acking it.
	WorkerCrashLate Kind = "worker-crash-late"
	// WorkerPause: the worker that takes the Nth task stalls For (default 1.5x the
	// visibility timeout) before fulfilling it.
	WorkerPause Kind = "worker-pause"
)

// Kinds lists every lock fault, in the order the matrix shows them.
var Kinds = []Kind{SlowWork, ClientPause, CrashAcquire, CrashHolder, RedisPause, RedisRestart, Failover, NetLatency, NetTimeout, Evict}

// QueueKinds lists the faults a queue sale takes, in the order the matrix shows them.
var QueueKinds = []Kind{WorkerCrash, WorkerCrashLate, WorkerPause, RedisRestart}

// Summary says in one line what each fault does, for `stockbench list`.
var Summary = map[Kind]string{
	SlowWork:     "the 5th holder works 1.5x the TTL; its process stays alive",
	ClientPause:  "the 5th holder's process stops 1.5x the TTL (stop-the-world), renewals too",
	CrashAcquire: "the 5th buyer dies between the commands that take the lock",
	CrashHolder:  "the 5th holder dies after reading the stock, holding the lock",
	RedisPause:   "the lock server stops 1.5x the TTL while the 5th holder works",
	RedisRestart: "the lock server (or the queue's) restarts empty while the 5th holder (or task) is being worked on",
	Failover:     "a replica that missed the latest locks replaces the lock server while the 5th holder works",
	NetLatency:   "every response from Redis is delayed 2ms ± 1ms (toxiproxy)",
	NetTimeout:   "the network to the lock server carries nothing for 1.5x the TTL while the 5th holder works (toxiproxy)",
	Evict:        "the lock server evicts its shortest-TTL keys, the locks, under a small maxmemory",

	WorkerCrash:     "3 workers, from the one with the 5th task, die holding their task before fulfilling it",
	WorkerCrashLate: "3 workers, from the one with the 5th task, die after fulfilling, before acking",
	WorkerPause:     "the worker with the 5th task stalls 1.5x the visibility timeout before fulfilling it",
}

// DefaultNth is the victim when a fault names none: early, but after the first rush.
const DefaultNth = 5

// Fault is one thing that goes wrong during a sale. Zero fields take defaults.
type Fault struct {
	Kind Kind
	// Nth is the victim: the Nth buyer to get the lock (or, for lock-free designs, to
	// start a purchase). Default: DefaultNth.
	Nth int
	// For is how long a pause, slow work or outage lasts. Default: 1.5x the sale's TTL.
	For time.Duration
	// Latency and Jitter shape NetLatency. Defaults: 2ms and 1ms.
	Latency, Jitter time.Duration
	// Count is how many workers a worker crash takes. Default: 3.
	Count int
}

func (f Fault) count() int {
	if f.Count > 0 {
		return f.Count
	}
	return 3
}

func (f Fault) nth() int {
	if f.Nth > 0 {
		return f.Nth
	}
	return DefaultNth
}

// lasting returns For, or 1.5x ttl.
func (f Fault) lasting(ttl time.Duration) time.Duration {
	if f.For > 0 {
		return f.For
	}
	return ttl * 3 / 2
}

// String is the written form Parse reads.
func (f Fault) String() string {
	s := string(f.Kind)
	if f.Nth > 0 {
		s += ":nth=" + strconv.Itoa(f.Nth)
	}
	if f.For > 0 {
		s += ":for=" + f.For.String()
	}
	if f.Latency > 0 {
		s += ":latency=" + f.Latency.String()
	}
	if f.Jitter > 0 {
		s += ":jitter=" + f.Jitter.String()
	}
	if f.Count > 0 {
		s += ":count=" + strconv.Itoa(f.Count)
	}
	return s
}

// Plan is the faults of one sale; they combine.
type Plan []Fault

// String is the written form Parse reads; "none" for an empty plan.
func (p Plan) String() string {
	if len(p) == 0 {
		return "none"
	}
	parts := make([]string, len(p))
	for i, f := range p {
		parts[i] = f.String()
	}
	return strings.Join(parts, "+")
}

// Documented is the name designs document their verdicts under for p: its faults'
// kinds joined by "+", "none" for none. ok is false when a setting changes what a fault
// does (how long it lasts, how slow the network is), so that the documented verdict
// need not hold; choosing another victim (nth) or more of them (count) does not.
func (p Plan) Documented() (name string, ok bool) {
	if len(p) == 0 {
		return "none", true
	}
	kinds := make([]string, len(p))
	ok = true
	for i, f := range p {
		kinds[i] = string(f.Kind)
		if f.For > 0 || f.Latency > 0 || f.Jitter > 0 {
			ok = false
		}
	}
	return strings.Join(kinds, "+"), ok
}

// Has reports whether p includes a fault of kind k.
func (p Plan) Has(k Kind) bool {
	return slices.ContainsFunc(p, func(f Fault) bool { return f.Kind == k })
}

// Parse reads a plan: faults joined by "+", each a kind with optional settings, as in
// "client-pause", "redis-pause:for=3s", "slow-work:nth=2+net-latency:latency=5ms".
// "none" or "" is the empty plan.
func Parse(spec string) (Plan, error) {
	if spec == "" || spec == "none" {
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
	if !slices.Contains(Kinds, f.Kind) && !slices.Contains(QueueKinds, f.Kind) {
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
			f.Nth, err = strconv.Atoi(v)
			if err == nil && f.Nth < 1 {
				err = fmt.Errorf("must be at least 1")
			}
		case "for":
			f.For, err = positive(v)
		case "latency":
			f.Latency, err = positive(v)
		case "jitter":
			f.Jitter, err = positive(v)
		case "count":
			f.Count, err = strconv.Atoi(v)
			if err == nil && f.Count < 1 {
				err = fmt.Errorf("must be at least 1")
			}
		default:
			err = fmt.Errorf("unknown setting (settings: nth, for, latency, jitter, count)")
		}
		if err != nil {
			return f, fmt.Errorf("fault %s: %s=%s: %w", f.Kind, k, v, err)
		}
	}
	return f, nil
}

func positive(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = fmt.Errorf("must be positive")
	}
	return d, err
}

func kindList() string {
	var names []string
	for _, k := range append(slices.Clone(Kinds), WorkerCrash, WorkerCrashLate, WorkerPause) {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// ForQueues reports whether every fault of p applies to a queue sale, and names the first
// that does not.
func (p Plan) ForQueues() (string, bool) {
	for _, f := range p {
		if !slices.Contains(QueueKinds, f.Kind) {
			return string(f.Kind), false
		}
	}
	return "", true
}

// ForLocks reports whether every fault of p applies to a lock sale, and names the first
// that does not.
func (p Plan) ForLocks() (string, bool) {
	for _, f := range p {
		if !slices.Contains(Kinds, f.Kind) {
			return string(f.Kind), false
		}
	}
	return "", true
}

// Needs says which servers a plan needs beyond a single Redis.
type Needs struct {
	// SeparateStock puts the stock on a server of its own: the fault is meant to break
	// the lock, not the data the lock protects, as with a lock service in front of a
	// database.
	SeparateStock bool
	// Replica is a standby for the lock server, for Failover.
	Replica bool
	// Proxy puts toxiproxy between buyers and every server.
	Proxy bool
	// Owned: the faults act on servers, so the harness must have started them.
	Owned bool
}

// Needs returns what p needs.
func (p Plan) Needs() Needs {
	var n Needs
	for _, f := range p {
		switch f.Kind {
		case RedisPause, RedisRestart:
			n.SeparateStock, n.Owned = true, true
		case Failover:
			n.SeparateStock, n.Replica, n.Owned = true, true, true
		case NetLatency:
			n.Proxy = true
		case NetTimeout:
			n.SeparateStock, n.Proxy = true, true
		case Evict:
			n.Owned = true
		}
	}
	return n
}
