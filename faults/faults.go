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
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stockbench/stockbench/internal/wait"
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
	RollingRestart  Kind = "rolling-restart"
	ServerErrors    Kind = "server-errors"
	Failover        Kind = "failover"
	ClockJump       Kind = "clock-jump"
	NetLatency      Kind = "net-latency"
	NetTimeout      Kind = "net-timeout"
	AppBlackhole    Kind = "app-blackhole"
	AppPause        Kind = "app-pause"
	Evict           Kind = "evict"
	WorkerCrash     Kind = "worker-crash"
	WorkerCrashLate Kind = "worker-crash-late"
	WorkerPause     Kind = "worker-pause"
	Reclaimers      Kind = "reclaimers"
	EvictLease      Kind = "evict-lease"
	EvictJob        Kind = "evict-job"
	ConsumerChurn   Kind = "consumer-churn"
	LatencySpike    Kind = "latency-spike"
	// CPUStarve, TermHolder, WorkerTerm and StepTerm, like RollingRestart and
	// ServerErrors, are kept out of the default matrix (Spec.optIn).
	CPUStarve  Kind = "cpu-starve"
	TermHolder Kind = "term-holder"
	WorkerTerm Kind = "worker-term"
	StepTerm   Kind = "step-term"
	// The faults on real topologies (Needs.Sentinel), kept out of the usual matrix.
	SentinelKill      Kind = "sentinel-kill"
	SentinelPartition Kind = "sentinel-partition"
	ClusterKill       Kind = "cluster-kill"
	ClusterMigrate    Kind = "cluster-migrate"
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
	// DefaultSpike and DefaultSpikeShare shape LatencySpike: a share of the calls wait
	// that long first.
	DefaultSpike      = 50 * time.Millisecond
	DefaultSpikeShare = 0.01
	// StarveRun and StarvePeriod shape CPUStarve: the victim runs StarveRun of every
	// StarvePeriod, as under a CPU quota of a tenth of a core (CFS bandwidth control
	// throttles a group that spent its quota until the period ends).
	StarveRun    = 10 * time.Millisecond
	StarvePeriod = 100 * time.Millisecond
	// TermGrace is how long TermHolder's victim has between SIGTERM and SIGKILL, as a
	// deploy gives (Kubernetes' terminationGracePeriodSeconds, shortened to the sale's
	// scale); TermNotice is how soon a process that does not handle SIGTERM is gone.
	TermGrace  = time.Second
	TermNotice = 100 * time.Millisecond
	// WorkerTermGrace and WorkerTermLength shape WorkerTerm, in visibility timeouts: a
	// grace shorter than the timeout (as a deploy's 30 s are against Celery's hour), and
	// a task longer than the grace but shorter than the timeout, so that what becomes of
	// it is the library's shutdown's doing, not a redelivery's.
	WorkerTermGrace  = 0.5
	WorkerTermLength = 0.75
	// RollingGap is how long RollingRestart waits before each restart, in TTLs: longer
	// than the TTL/3 between a renewing lease's renewals, so that one comes between two
	// restarts, as a rolling deploy that waits for each server to be ready gives it.
	RollingGap = 0.5
	// DefaultStep is where StepTerm strikes: a task taken off Redis by the library's own
	// worker loop, not yet marked as started (rq/rq#2236). StepHold is how long an
	// adapter stays at a step it reported, so that the signal lands inside it.
	DefaultStep = "dequeued"
	StepHold    = 200 * time.Millisecond
	// ReapersInStep is how many reapers Reclaimers runs at once, each round started
	// together: as many instances of an app as the sale's admin connections serve.
	ReapersInStep = 4
)

// KeyClass is a class of a queue design's keys, which EvictLease and EvictJob evict one
// at a time (see queueimpl.Classed).
type KeyClass string

// The classes.
const (
	// LeaseKeys record who holds a task and until when: asynq's lease set, reliable-list's
	// take times. Not the list of tasks in flight itself.
	LeaseKeys KeyClass = "lease"
	// JobKeys are a task's own record, apart from the lists that order the tasks:
	// asynq's task hash.
	JobKeys KeyClass = "job"
)

// Fault is the fault that evicts c.
func (c KeyClass) Fault() Kind {
	if c == JobKeys {
		return EvictJob
	}
	return EvictLease
}

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
	// Persist, when set, is the mode the faulted server runs in from its start.
	Persist Persistence
	// Clock: the faulted server runs with a wall clock the fault can move.
	Clock bool
	// Sentinel: the sale runs on a Sentinel group of containers (a master, a replica and
	// three sentinels) through the failover client, stock and lock on the master.
	Sentinel bool
	// Cluster: the sale runs on a Redis Cluster of containers (three masters with a
	// replica each) through the cluster client, its keys in one slot.
	Cluster bool
	// AllLocks: the fault acts on every lock server of a design of several (Redlock's
	// five), not on the first alone.
	AllLocks bool
	// Debug: the faulted server takes DEBUG commands (Redis 7 refuses them unless
	// started to), which server-errors' loading mode reloads it with.
	Debug bool
	// LateReplicas: the cluster's replicas join only as ClusterKill strikes, after the
	// buyers' clients mapped it (ReplicaLate).
	LateReplicas bool
	// PerApp: the fault acts on one application instance while the others go on, so the
	// sale needs two instances at least (FlashSale.Apps); with Proxy, each instance
	// reaches the lock servers through a path of its own.
	PerApp bool
}

// ServerArgs are the redis-server arguments the faulted server starts with, after the
// harness's own; a server that needs any comes fresh, never from the pool.
func (n Needs) ServerArgs() []string {
	args := n.Persist.Args()
	if n.Debug {
		args = append(args, "--enable-debug-command", "yes")
	}
	return args
}

// Disrupts reports whether the faults act on Redis itself, a server, the network or a
// whole application instance: the errors clients meet are then the faults' doing (a
// call of a stopped instance's comes back late, or its client's deadline passed), and a
// robust client carries on.
func (n Needs) Disrupts() bool { return n.Owned || n.Proxy || n.Sentinel || n.Cluster || n.PerApp }

func (n Needs) or(o Needs) Needs {
	return Needs{n.SeparateStock || o.SeparateStock, n.Replica || o.Replica, n.Proxy || o.Proxy, n.Owned || o.Owned,
		cmp.Or(n.Persist, o.Persist), n.Clock || o.Clock, n.Sentinel || o.Sentinel, n.Cluster || o.Cluster,
		n.AllLocks || o.AllLocks, n.Debug || o.Debug, n.LateReplicas || o.LateReplicas, n.PerApp || o.PerApp}
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
	// OnCall: a share of the buyers' calls, as each goes out (see Injector.Spike).
	OnCall
	// OnStep: the Nth time a process adapter's worker reports reaching a named step
	// (see Injector.Stepped).
	OnStep
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
	// victim is what becomes of a victim that lives through the fault for d, in a sale
	// whose TTL (visibility timeout) is ttl, and what it does, for the record.
	victim func(f Fault, d, ttl time.Duration) (Victim, string)
	// length is how long the fault lasts by default, in TTLs. Default: DefaultLength.
	length float64
	// server acts on the lock server for d while the victim (who) works, and says what
	// it did.
	server func(ctx context.Context, in *Injector, f Fault, d time.Duration, who Who) (string, error)
	// by: the fault's length is how far a clock jumps (by=), not how long it lasts (for=).
	by bool
	// choice names the fault's one named setting (a mode, a persistence), and choices its
	// values, the default first; "" for none.
	choice  string
	choices []string
	// timeless: the fault takes as long as it takes (a crash, a restart, a failover),
	// whatever its length says, so that its for= changes nothing (but a restart's, which
	// keeps the server down that long first) and nobody draws one.
	timeless bool
	// thinks: the victim's fate also stretches the think of a lock-free purchase.
	thinks bool
	// span: Count victims from the Nth, not one.
	span bool
	// rated: the fault strikes at a rate alone (a share of calls), never one victim, so
	// the matrix of one-victim faults leaves it out.
	rated bool
	// optIn: documented and asserted as the others, but kept out of the default matrix,
	// which the committed baseline holds (matrix --faults NAME runs it).
	optIn bool
	// extends is a fault whose victim's fate this one's includes (the worker dies, as
	// under WorkerCrash, and more): what a design claims there holds here too unless it
	// claims otherwise (see Extends).
	extends Kind
}

// Extends is the fault whose victim's fate s's includes, "" when none: a claim under
// that one holds under s unless s has its own.
func (s Spec) Extends() Kind { return s.extends }

// Infra reports whether the fault runs on a topology of its own (Sentinel), which the
// usual matrix leaves out: see InfraKinds.
func (s Spec) Infra() bool { return s.Needs.Sentinel || s.Needs.Cluster }

// Rated reports whether the fault can strike at a rate (its p setting): every victim of
// its kind with probability p, instead of the Nth alone.
func (s Spec) Rated() bool { return s.rated || s.victim != nil }

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
		victim: func(_ Fault, d, _ time.Duration) (Victim, string) {
			return Victim{Until: time.Now().Add(d)}, fmt.Sprintf("works %s", d)
		},
	},
	{
		Kind: ClientPause, Applies: Locks, Fires: OnVictim, thinks: true,
		Summary: fmt.Sprintf("the %s holder's process stops %s the TTL (stop-the-world), renewals too", nth, length),
		victim: func(_ Fault, d, _ time.Duration) (Victim, string) {
			until := time.Now().Add(d)
			return Victim{Until: until, FreezeUntil: until}, fmt.Sprintf("paused %s, renewals too", d)
		},
	},
	{
		Kind: CPUStarve, Applies: Locks, Fires: OnVictim, thinks: true, optIn: true,
		Summary: fmt.Sprintf("the %s holder's process gets %s of every %s of CPU for %s the TTL (a quota, a busy neighbour): its work takes that long, and what renews its lease runs late", nth, StarveRun, StarvePeriod, length),
		victim: func(_ Fault, d, _ time.Duration) (Victim, string) {
			until := time.Now().Add(d)
			return Victim{Until: until, StarveUntil: until}, fmt.Sprintf("starved to %s of every %s for %s", StarveRun, StarvePeriod, d)
		},
	},
	{
		// What it did is recorded by the sale once it sent the signal (Injector.Strike):
		// a holder without a process of its own is not exercised.
		Kind: TermHolder, Applies: Locks, Fires: OnVictim, optIn: true,
		Summary:  fmt.Sprintf("the %s holder's process is sent SIGTERM after reading, as a deploy sends it, and SIGKILL %s later if still there: one that stops at once dies holding the lock, one that handles it finishes its request first", nth, TermGrace),
		timeless: true,
		victim: func(Fault, time.Duration, time.Duration) (Victim, string) {
			return Victim{Term: true, Grace: TermGrace}, ""
		},
	},
	{
		// Recorded by the sale once it stopped the processes (Injector.Strike): an
		// instance without processes of its own (a built-in design's goroutines) is not
		// exercised.
		Kind: AppPause, Applies: Locks, Fires: OnVictim, Needs: Needs{PerApp: true}, optIn: true,
		Summary: fmt.Sprintf("every process of the %s holder's application instance is stopped (SIGSTOP) %s the TTL after it read, a stop-the-world pause of the whole instance (a frozen VM or container), while the other instances go on (a process adapter's; the sale's --apps 2 or more, 2 when not given)", nth, length),
		victim: func(_ Fault, d, _ time.Duration) (Victim, string) {
			return Victim{AppPauseUntil: time.Now().Add(d)}, ""
		},
	},
	{
		Kind: CrashAcquire, Applies: Locks, Fires: OnAcquire,
		Summary: fmt.Sprintf("the %s buyer dies between the commands that take the lock", nth),
	},
	{
		Kind: CrashHolder, Applies: Locks, Fires: OnVictim,
		Summary:  fmt.Sprintf("the %s holder dies after reading the stock, holding the lock", nth),
		timeless: true,
		victim: func(_ Fault, _, _ time.Duration) (Victim, string) {
			return Victim{Crash: true}, "dies holding the lock"
		},
	},
	{
		Kind: RedisPause, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true},
		Summary: fmt.Sprintf("the lock server stops %s the TTL while the %s holder works (servers=k: the first k of a design's several lock servers at once, a minority or a majority of Redlock's)", length, nth),
		server: func(ctx context.Context, in *Injector, f Fault, d time.Duration, who Who) (string, error) {
			on := in.lockServers(f)
			err := onEach(on, func(s Server) error { return s.Pause(ctx, d) })
			return fmt.Sprintf("%s paused %s while %s holds the lock", in.serversWord(len(on)), d, who), err
		},
	},
	{
		Kind: RedisRestart, Applies: Locks | Queues, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true},
		choice: "persist", choices: words(Persistences),
		Summary:  fmt.Sprintf("the lock server (or the queue's) is killed and restarts while the %s holder (or task) is being worked on: empty, or with what its persistence mode kept (persist=none|rdb|aof-everysec|aof-always); at once, or kept down for= first (a delayed restart, as the Redis docs prescribe for locks: longer than the longest lease); servers=k: the first k of a design's several lock servers at once", nth),
		timeless: true,
		server: func(ctx context.Context, in *Injector, f Fault, _ time.Duration, who Who) (string, error) {
			began := time.Now()
			on := in.lockServers(f)
			err := onEach(on, func(s Server) error { return s.Restart(ctx, f.For) })
			down := ""
			if f.For > 0 {
				down = fmt.Sprintf(", kept down %s,", f.For)
			}
			// How long it was down says whether a lock it kept had expired meanwhile.
			return fmt.Sprintf("%s killed%s and restarted %s, answering again after %s, while %s holds it",
				in.serversWord(len(on)), down, in.persist.kept(), time.Since(began).Round(time.Millisecond), who), err
		},
	},
	{
		Kind: RollingRestart, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true, AllLocks: true},
		optIn: true, length: RollingGap,
		Summary: fmt.Sprintf("while the %s holder works, a majority of the lock servers (the one of most designs, three of Redlock's five) are killed and restart empty one after another, %gx the TTL apart (for=), as a rolling deploy of servers without persistence does: a lease renewed only where its key still is ends on a minority", nth, RollingGap),
		server:  rolling,
	},
	{
		Kind: ServerErrors, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true}, optIn: true,
		choice: "mode", choices: modes,
		Summary: fmt.Sprintf("the lock server (the first of Redlock's five; the others answer) answers errors for %s the TTL while the %s holder works: OOM to writes, as at maxmemory with noeviction (mode=oom, the default), READONLY to writes, as a master demoted to a replica (mode=readonly), or LOADING to everything, as while it reloads its dataset (mode=loading: DEBUG RELOAD, slowed to last that long)", length, nth),
		server:  answerErrors,
	},
	{
		Kind: Failover, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Replica: true, Owned: true},
		Summary: fmt.Sprintf("a replica that missed the latest locks replaces the lock server while the %s holder works (in a scheduled drop, the scheduler instance firing the %s wave: the scheduler lock lost, the wave fires twice)", nth, nth),
		// The replica stops at the start: every lock granted from then on is on the
		// primary only.
		start: func(ctx context.Context, in *Injector, _ Fault) (string, error) {
			return "replica detached from the lock server", in.srv.Replica.Detach(ctx)
		},
		timeless: true,
		server: func(ctx context.Context, in *Injector, _ Fault, _ time.Duration, who Who) (string, error) {
			// Clients move first, as a sentinel tells them to; then the old primary dies.
			in.srv.Lock.Redirect(in.srv.Replica.Addr())
			return fmt.Sprintf("lock server killed; its replica, detached before, serves in its place while %s holds the lock", who),
				in.srv.Lock.Kill(ctx)
		},
	},
	{
		Kind: ClockJump, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Owned: true, Clock: true}, by: true,
		Summary: fmt.Sprintf("the lock server's wall clock jumps %s the TTL forward while the %s holder works: Redis keeps expiries as wall-clock times, so its keys expire early (by=how far)", length, nth),
		server: func(ctx context.Context, in *Injector, _ Fault, d time.Duration, who Who) (string, error) {
			return fmt.Sprintf("lock server's clock jumped %s forward while %s holds the lock", d, who), in.srv.Lock.JumpClock(ctx, d)
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
		server: func(ctx context.Context, in *Injector, _ Fault, d time.Duration, who Who) (string, error) {
			return fmt.Sprintf("network to the lock server carries nothing for %s while %s holds the lock", d, who), in.outage(ctx, d)
		},
	},
	{
		Kind: AppBlackhole, Applies: Locks, Fires: OnVictim, Needs: Needs{SeparateStock: true, Proxy: true, PerApp: true}, optIn: true,
		Summary: fmt.Sprintf("the network between the %s holder's application instance and the lock servers carries nothing for %s the TTL, its connections left open, while the other instances reach them (toxiproxy; the sale's --apps 2 or more, 2 when not given)", nth, length),
		server: func(ctx context.Context, in *Injector, _ Fault, d time.Duration, who Who) (string, error) {
			return fmt.Sprintf("network between app %d and the lock servers carries nothing for %s while %s holds the lock; the other apps reach them", who.App+1, d, who),
				in.blackhole(ctx, who.App, d)
		},
	},
	{
		Kind: Evict, Applies: Locks, Fires: AtStart, Needs: Needs{Owned: true},
		Summary: "the lock server evicts its shortest-TTL keys, the locks, under a small maxmemory",
		start:   evict,
	},
	{
		Kind: LatencySpike, Applies: Locks, Fires: OnCall, rated: true,
		Summary: fmt.Sprintf("a share of %g of the buyers' calls wait %s before they go out (a hiccup of the client or the network; p=, latency=)", DefaultSpikeShare, DefaultSpike),
	},
	{
		Kind: SentinelKill, Applies: Locks | Queues, Fires: OnVictim, Needs: Needs{Sentinel: true},
		start:    groupSynced,
		Summary:  fmt.Sprintf("the Sentinel group's master is killed while the %s holder works (or task is worked on); the sentinels promote its replica (real Sentinel, containers)", nth),
		timeless: true,
		server: func(ctx context.Context, in *Injector, _ Fault, _ time.Duration, who Who) (string, error) {
			detail, err := in.srv.Sentinel.KillMaster(ctx)
			return fmt.Sprintf("%s, while %s holds it", detail, who), err
		},
	},
	{
		Kind: SentinelPartition, Applies: Locks | Queues, Fires: OnVictim, Needs: Needs{Sentinel: true},
		start:   groupSynced,
		Summary: fmt.Sprintf("the Sentinel group's master is cut off from the sentinels and its replica, not from the buyers (nor the workers), while the %s holder works (or task is worked on): a split brain", nth),
		server: func(ctx context.Context, in *Injector, _ Fault, d time.Duration, who Who) (string, error) {
			detail, err := in.srv.Sentinel.Partition(ctx, d)
			return fmt.Sprintf("%s, while %s holds it", detail, who), err
		},
	},
	{
		Kind: ClusterKill, Applies: Locks, Fires: OnVictim, Needs: Needs{Cluster: true},
		start:  slotsSynced,
		choice: "replica", choices: replicaTimes,
		Summary: fmt.Sprintf("on a Redis Cluster of containers, the master of the sale's slot is killed while the %s holder works; its replica takes over. "+
			"replica=listed (the default): every master lists its replica in the slot map before the buyers' clients connect; "+
			"replica=late: the replicas join as the fault strikes, after the clients mapped the cluster, as a replica added to a running cluster", nth),
		timeless: true,
		server: func(ctx context.Context, in *Injector, _ Fault, _ time.Duration, who Who) (string, error) {
			detail, err := in.srv.Cluster.KillMaster(ctx, in.prefix)
			return fmt.Sprintf("%s, while %s holds the lock", detail, who), err
		},
	},
	{
		Kind: ClusterMigrate, Applies: Locks, Fires: OnVictim, Needs: Needs{Cluster: true},
		start:    slotsSynced,
		Summary:  fmt.Sprintf("on a Redis Cluster of containers, the sale's slot (lock and stock) migrates to another master while the %s holder works (ASK, TRYAGAIN, then MOVED)", nth),
		timeless: true,
		server: func(ctx context.Context, in *Injector, _ Fault, _ time.Duration, who Who) (string, error) {
			detail, err := in.srv.Cluster.Migrate(ctx, in.prefix)
			return fmt.Sprintf("%s, while %s holds the lock", detail, who), err
		},
	},
	{
		Kind: WorkerCrash, Applies: Queues, Fires: OnVictim, span: true,
		Summary:  fmt.Sprintf("%d workers, from the one with the %s task, die holding their task before fulfilling it", DefaultCount, nth),
		timeless: true,
		victim: func(_ Fault, _, _ time.Duration) (Victim, string) {
			return Victim{Crash: true}, "dies"
		},
	},
	{
		Kind: WorkerCrashLate, Applies: Queues, Fires: OnVictim, span: true,
		Summary:  fmt.Sprintf("%d workers, from the one with the %s task, die after fulfilling, before acking", DefaultCount, nth),
		timeless: true,
		victim: func(_ Fault, _, _ time.Duration) (Victim, string) {
			return Victim{CrashLate: true}, "dies"
		},
	},
	{
		Kind: WorkerPause, Applies: Queues, Fires: OnVictim,
		Summary: fmt.Sprintf("the worker with the %s task stalls %s the visibility timeout before fulfilling it", nth, length),
		victim: func(_ Fault, d, _ time.Duration) (Victim, string) {
			until := time.Now().Add(d)
			return Victim{Until: until, FreezeUntil: until}, fmt.Sprintf("stalls %s", d)
		},
	},
	{
		// The reapers in step are the sale's (Injector.Reapers); it records what they did.
		Kind: Reclaimers, Applies: Queues, Fires: OnVictim, optIn: true, extends: WorkerCrash,
		Summary:  fmt.Sprintf("the worker with the %s task dies holding it, and the design's reaper runs as %d reapers in step, as each instance of an app runs its own on the same schedule: one that reads what is overdue and then moves it hands a task back more than once, to live workers. A design that reclaims as it dequeues has a reclaimer in every worker already", nth, ReapersInStep),
		timeless: true,
		victim: func(_ Fault, _, _ time.Duration) (Victim, string) {
			return Victim{Crash: true}, "dies"
		},
	},
	{
		// The sale evicts, records and kills (Victim.Evict): only it knows the design's keys.
		Kind: EvictLease, Applies: Queues, Fires: OnVictim, optIn: true, extends: WorkerCrash,
		Summary: fmt.Sprintf("while the worker with the %s task holds it, the queue server evicts the keys that record who holds a task until when (the design's lease keys: asynq's lease set, reliable-list's take times), as a maxmemory policy that reaches them does, and that worker then dies: a recovery that looks for tasks only where their leases were never finds it. NOT-EXERCISED where the design keeps no such key", nth),
		victim:  func(Fault, time.Duration, time.Duration) (Victim, string) { return Victim{Evict: LeaseKeys}, "" },
	},
	{
		Kind: EvictJob, Applies: Queues, Fires: OnVictim, optIn: true, extends: WorkerCrash,
		Summary: fmt.Sprintf("while the worker with the %s task holds it, the queue server evicts that task's own record (the design's job keys: asynq's task hash), as a maxmemory policy that reaches it does, and that worker then dies: a recovery that needs the record to hand the task back cannot. NOT-EXERCISED where the design keeps no such key", nth),
		victim:  func(Fault, time.Duration, time.Duration) (Victim, string) { return Victim{Evict: JobKeys}, "" },
	},
	{
		// The sale deletes, records and kills (Victim.Churn): only it knows the design's group.
		Kind: ConsumerChurn, Applies: Queues, Fires: OnVictim, optIn: true, extends: WorkerCrash,
		Summary: fmt.Sprintf("the worker with the %s task dies holding it, its consumer is deleted from the group as a cleanup of gone consumers does (XGROUP DELCONSUMER), and workers go on under new names, as after a deploy: the entries a deleted consumer had pending go with it. NOT-EXERCISED where the design's workers are not consumers of a group", nth),
		victim:  func(Fault, time.Duration, time.Duration) (Victim, string) { return Victim{Churn: true}, "" },
	},
	{
		// Recorded by the sale once it sent the signal, as TermHolder.
		Kind: WorkerTerm, Applies: Queues, Fires: OnVictim, optIn: true, length: WorkerTermLength,
		Summary: fmt.Sprintf("the process of the worker with the %s task is sent SIGTERM as the task starts, as a deploy sends it, and SIGKILL %gx the visibility timeout later if still there; the task takes %gx the timeout (for=): one that stops at once loses it, one that drains is killed mid-task or hands it back, as its library's shutdown does", nth, WorkerTermGrace, WorkerTermLength),
		victim: func(_ Fault, d, ttl time.Duration) (Victim, string) {
			return Victim{Term: true, Grace: time.Duration(float64(ttl) * WorkerTermGrace), Until: time.Now().Add(d)}, ""
		},
	},
	{
		// Struck by the sale when the adapter reports the step (Injector.Stepped).
		Kind: StepTerm, Applies: Queues, Fires: OnStep, optIn: true,
		Summary: fmt.Sprintf("the process of a queue worker is sent SIGTERM the %s time its library's own worker loop reaches a step the adapter names (step=, default %s: a task taken off Redis, not yet marked as started), as a deploy's signal lands where it will, and SIGKILL %gx the visibility timeout later if still there; the adapter stays %s at the step it reported. NOT-EXERCISED where the adapter names no such step", nth, DefaultStep, WorkerTermGrace, StepHold),
	},
}

// groupSynced and slotsSynced make sure, before a fault on a replicated topology can
// strike, that the replicas have the sale's set-up: the fault then tests what a failover
// does to the sale, and a stock that vanishes anyway is a finding, not the harness's
// haste.
func groupSynced(ctx context.Context, in *Injector, _ Fault) (string, error) {
	return in.srv.Sentinel.Synced(ctx)
}

func slotsSynced(ctx context.Context, in *Injector, _ Fault) (string, error) {
	return in.srv.Cluster.Synced(ctx, in.prefix)
}

// lockServers are the lock servers f strikes: the first of them, or its servers=k first.
func (in *Injector) lockServers(f Fault) []Server {
	if f.Servers <= 1 || len(in.srv.Locks) == 0 {
		return []Server{in.srv.Lock}
	}
	return in.srv.Locks[:min(f.Servers, len(in.srv.Locks))]
}

// serversWord names k of the sale's lock servers, for the record.
func (in *Injector) serversWord(k int) string {
	if k <= 1 {
		return "lock server"
	}
	return fmt.Sprintf("%d of %d lock servers", k, len(in.srv.Locks))
}

// onEach runs do on every server at once and joins what went wrong.
func onEach(on []Server, do func(Server) error) error {
	errs := make([]error, len(on))
	var wg sync.WaitGroup
	for i, s := range on {
		wg.Go(func() { errs[i] = do(s) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// rolling restarts a majority of the lock servers one after another, waiting gap before
// each, and says how long each took to answer again.
func rolling(ctx context.Context, in *Injector, _ Fault, gap time.Duration, who Who) (string, error) {
	n := len(in.srv.Locks)/2 + 1
	took := make([]string, 0, n)
	for i := range n {
		if err := wait.Sleep(ctx, gap); err != nil {
			return fmt.Sprintf("rolling restart stopped after %d of %d lock servers", i, n), err
		}
		began := time.Now()
		if err := in.srv.Locks[i].Restart(ctx, 0); err != nil {
			return fmt.Sprintf("lock server %d of %d did not come back", i+1, len(in.srv.Locks)),
				fmt.Errorf("restart lock server %d: %w", i+1, err)
		}
		took = append(took, time.Since(began).Round(time.Millisecond).String())
	}
	return fmt.Sprintf("%d of %d lock servers killed and restarted empty in turn, %s apart (each answering again after %s), while %s holds the lock",
		n, len(in.srv.Locks), gap, strings.Join(took, ", "), who), nil
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

// Kinds lists the faults that apply to a and strike one victim, in the order a matrix
// shows them: those on the sale's own clients first, then those on its servers and
// network. The faults that only strike at a rate (LatencySpike) are not among them.
func Kinds(a Applies) []Kind {
	var client, servers []Kind
	for _, s := range specs {
		switch {
		case s.Applies&a == 0, s.rated, s.Infra():
		case s.Needs == Needs{}:
			client = append(client, s.Kind)
		default:
			servers = append(servers, s.Kind)
		}
	}
	return append(client, servers...)
}

// MatrixKinds lists the faults of the default matrix of sales of a: Kinds less those
// kept out of it (cpu-starve, term-holder).
func MatrixKinds(a Applies) []Kind {
	var kinds []Kind
	for _, k := range Kinds(a) {
		if s, ok := Lookup(k); !ok || !s.optIn {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

// InfraKinds lists the faults of sales of a that run on a topology of their own
// (stockbench matrix --infra, make bench-infra).
func InfraKinds(a Applies) []Kind {
	var kinds []Kind
	for _, s := range specs {
		if s.Applies&a != 0 && s.Infra() {
			kinds = append(kinds, s.Kind)
		}
	}
	return kinds
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
