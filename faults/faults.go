// Package faults describes what goes wrong during a sale and makes it happen: a lock holder
// that works too long, pauses or dies; a queue worker that dies or stalls with its task;
// the lock server paused, restarted empty or failed over; the network slowed or cut; lock
// keys evicted.
//
// Every fault is one entry of one table ([Specs]): its name, what it does (said with its
// real defaults), the sales it applies to, the servers it needs and the moment it strikes.
// Everything else (parsing, validation, the command line's lists) reads the table.
//
// Most faults happen to one victim: the Nth buyer to get the lock, or the Nth task a
// worker takes. A client fault changes what the victim does; a server or network fault is
// set off when the victim gets the lock, and the victim keeps working until it is over,
// as a holder in the middle of a long operation would. The verdicts are then repeatable:
// whether the lock lets a second buyer in while the victim still holds it decides whether
// the sale oversells.
package faults

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Kind names a fault.
type Kind string

// The faults. Each one's entry in the table says what it does.
const (
	SlowWork        Kind = "slow-work"
	ClientPause     Kind = "client-pause"
	CrashAcquire    Kind = "crash-acquire"
	CrashHolder     Kind = "crash-holder"
	RedisPause      Kind = "redis-pause"
	RedisRestart    Kind = "redis-restart"
	Failover        Kind = "failover"
	NetLatency      Kind = "net-latency"
	NetTimeout      Kind = "net-timeout"
	Evict           Kind = "evict"
	WorkerCrash     Kind = "worker-crash"
	WorkerCrashLate Kind = "worker-crash-late"
	WorkerPause     Kind = "worker-pause"
)

// None is the written form of a plan without faults.
const None = "none"

// Defaults for a [Fault]'s zero settings.
const (
	// DefaultNth is the victim: early, but after the first rush.
	DefaultNth = 5
	// DefaultLength is how long a pause, slow work or outage lasts, in TTLs (for a queue,
	// visibility timeouts).
	DefaultLength = 1.5
	// DefaultCount is how many workers a worker crash takes.
	DefaultCount = 3
	// DefaultLatency and DefaultJitter shape NetLatency.
	DefaultLatency = 2 * time.Millisecond
	DefaultJitter  = time.Millisecond
)

// Applies says which sales a fault can strike.
type Applies uint8

// The sales.
const (
	Locks  Applies = 1 << iota // flash sales through a lock design
	Queues                     // sales through a queue design
)

func (a Applies) String() string {
	switch a {
	case Locks:
		return "locks"
	case Queues:
		return "queues"
	case Locks | Queues:
		return "locks, queues"
	}
	return "nothing"
}

// Needs says which servers a fault needs beyond a single Redis.
type Needs struct {
	// SeparateStock puts the stock on a server of its own: the fault is meant to break
	// the lock, not the data the lock protects, as with a lock service in front of a
	// database.
	SeparateStock bool
	// Replica is a standby for the lock server, for Failover.
	Replica bool
	// Proxy puts toxiproxy between buyers and every server.
	Proxy bool
	// Owned: the fault acts on servers, so the harness must have started them.
	Owned bool
}

// Disrupts reports whether the faults act on Redis itself, a server or the network: the
// errors clients meet are then the faults' doing, and a robust client carries on.
func (n Needs) Disrupts() bool { return n.Owned || n.Proxy }

func (n Needs) or(o Needs) Needs {
	return Needs{n.SeparateStock || o.SeparateStock, n.Replica || o.Replica, n.Proxy || o.Proxy, n.Owned || o.Owned}
}

// Hook is the moment a fault strikes.
type Hook uint8

// The moments.
const (
	// AtStart: as the sale starts, for all of it.
	AtStart Hook = iota
	// OnAcquire: the Nth buyer, as it takes the lock.
	OnAcquire
	// OnVictim: the Nth holder right after it read the stock, or the Nth task a worker
	// took, or for a lock-free design the Nth purchase.
	OnVictim
)

// Spec is one fault's entry in the table.
type Spec struct {
	Kind Kind
	// Summary says in one line what the fault does with its default settings.
	Summary string
	Applies Applies
	Needs   Needs
	Fires   Hook

	// start sets up what lasts the whole sale and says what it did.
	start func(ctx context.Context, in *Injector, f Fault) (string, error)
	// victim is what becomes of a victim that lives through the fault for d, and what
	// it does, for the record.
	victim func(f Fault, d time.Duration) (Victim, string)
	// server acts on the lock server for d while the victim (who) works, and says what
	// it did.
	server func(ctx context.Context, in *Injector, d time.Duration, who string) (string, error)
	// thinks: the victim's fate also stretches the think of a lock-free purchase.
	thinks bool
	// span: Count victims from the Nth, not one.
	span bool
}

// nth and length are the defaults as the summaries say them.
var (
	nth    = ordinal(DefaultNth)
	length = fmt.Sprintf("%gx", DefaultLength)
)

// specs is the table, in the order `stockbench list` shows it: the faults of lock sales,
// then those of queue sales alone.
var specs = []Spec{
	{
		Kind: SlowWork, Applies: Locks, Fires: OnVictim, thinks: true,
		Summary: fmt.Sprintf("the %s holder works %s the TTL; its process stays alive", nth, length),
		victim: func(_ Fault, d time.Duration) (Victim, string) {
			return Victim{Until: time.Now().Add(d)}, fmt.Sprintf("works %s", d)
		},
	},
	{
		Kind: ClientPause, Applies: Locks, Fires: OnVictim, thinks: true,
		Summary: fmt.Sprintf("the %s holder's process stops %s the TTL (stop-the-world), renewals too", nth, length),
		victim: func(_ Fault, d time.Duration) (Victim, string) {
			until := time.Now().Add(d)
			return Victim{Until: until, FreezeUntil: until}, fmt.Sprintf("paused %s, renewals too", d)
		},
	},
	{
		Kind: CrashAcquire, Applies: Locks, Fires: OnAcquire,
		Summary: fmt.Sprintf("the %s buyer dies between the commands that take the lock", nth),
	},
	{
		Kind: CrashHolder, Applies: Locks, Fires: OnVictim,
		Summary: fmt.Sprintf("the %s holder dies after reading the stock, holding the lock", nth),
		victim: func(Fault, time.Duration) (Victim, string) {
			return Victim{Crash: true}, "dies holding the lock"
		},
	},
	{
		Kind: RedisPause, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true},
		Summary: fmt.Sprintf("the lock server stops %s the TTL while the %s holder works", length, nth),
		server: func(ctx context.Context, in *Injector, d time.Duration, who string) (string, error) {
			return fmt.Sprintf("lock server paused %s while %s holds the lock", d, who), in.srv.Lock.Pause(ctx, d)
		},
	},
	{
		Kind: RedisRestart, Applies: Locks | Queues, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true},
		Summary: fmt.Sprintf("the lock server (or the queue's) restarts empty while the %s holder (or task) is being worked on", nth),
		server: func(ctx context.Context, in *Injector, _ time.Duration, who string) (string, error) {
			return fmt.Sprintf("lock server killed and restarted empty while %s holds it", who), in.srv.Lock.Restart(ctx)
		},
	},
	{
		Kind: Failover, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Replica: true, Owned: true},
		Summary: fmt.Sprintf("a replica that missed the latest locks replaces the lock server while the %s holder works", nth),
		// The replica stops at the start: every lock granted from then on is on the
		// primary only.
		start: func(ctx context.Context, in *Injector, _ Fault) (string, error) {
			return "replica detached from the lock server", in.srv.Replica.Detach(ctx)
		},
		server: func(ctx context.Context, in *Injector, _ time.Duration, who string) (string, error) {
			// Clients move first, as a sentinel tells them to; then the old primary dies.
			in.srv.Lock.Redirect(in.srv.Replica.Addr())
			return fmt.Sprintf("lock server killed; its replica, detached before, serves in its place while %s holds the lock", who),
				in.srv.Lock.Kill(ctx)
		},
	},
	{
		Kind: NetLatency, Applies: Locks, Fires: AtStart, Needs: Needs{Proxy: true},
		Summary: fmt.Sprintf("every response from Redis is delayed %s ± %s (toxiproxy)", DefaultLatency, DefaultJitter),
		start:   latency,
	},
	{
		Kind: NetTimeout, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Proxy: true},
		Summary: fmt.Sprintf("the network to the lock server carries nothing for %s the TTL while the %s holder works (toxiproxy)", length, nth),
		server: func(ctx context.Context, in *Injector, d time.Duration, who string) (string, error) {
			return fmt.Sprintf("network to the lock server carries nothing for %s while %s holds the lock", d, who), in.outage(ctx, d)
		},
	},
	{
		Kind: Evict, Applies: Locks, Fires: AtStart, Needs: Needs{Owned: true},
		Summary: "the lock server evicts its shortest-TTL keys, the locks, under a small maxmemory",
		start:   evict,
	},
	{
		Kind: WorkerCrash, Applies: Queues, Fires: OnVictim, span: true,
		Summary: fmt.Sprintf("%d workers, from the one with the %s task, die holding their task before fulfilling it", DefaultCount, nth),
		victim: func(Fault, time.Duration) (Victim, string) {
			return Victim{Crash: true}, "dies"
		},
	},
	{
		Kind: WorkerCrashLate, Applies: Queues, Fires: OnVictim, span: true,
		Summary: fmt.Sprintf("%d workers, from the one with the %s task, die after fulfilling, before acking", DefaultCount, nth),
		victim: func(Fault, time.Duration) (Victim, string) {
			return Victim{CrashLate: true}, "dies"
		},
	},
	{
		Kind: WorkerPause, Applies: Queues, Fires: OnVictim,
		Summary: fmt.Sprintf("the worker with the %s task stalls %s the visibility timeout before fulfilling it", nth, length),
		victim: func(_ Fault, d time.Duration) (Victim, string) {
			return Victim{Until: time.Now().Add(d)}, fmt.Sprintf("stalls %s", d)
		},
	},
}

// Specs returns the table, in the order `stockbench list` shows it.
func Specs() []Spec { return slices.Clone(specs) }

// Lookup returns k's entry.
func Lookup(k Kind) (Spec, bool) {
	i := slices.IndexFunc(specs, func(s Spec) bool { return s.Kind == k })
	if i < 0 {
		return Spec{}, false
	}
	return specs[i], true
}

// spec is k's entry, for kinds already known to be in the table.
func spec(k Kind) Spec {
	s, _ := Lookup(k)
	return s
}

// Kinds lists the faults that apply to a, in the order a matrix shows them: those on the
// sale's own clients first, then those on its servers and network.
func Kinds(a Applies) []Kind {
	var client, servers []Kind
	for _, s := range specs {
		switch {
		case s.Applies&a == 0:
		case s.Needs == Needs{}:
			client = append(client, s.Kind)
		default:
			servers = append(servers, s.Kind)
		}
	}
	return append(client, servers...)
}

// ordinal writes n as "1st", "2nd", "5th".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}
