package faults

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// Server is a lock server a fault acts on; *target.Target is one.
type Server interface {
	Pause(ctx context.Context, d time.Duration) error
	// Restart kills the server and starts it again once down has passed (0: at once).
	Restart(ctx context.Context, down time.Duration) error
	Kill(ctx context.Context) error
	Redirect(addr string)
	Addr() string
	Detach(ctx context.Context) error
	// JumpClock moves the server's wall clock forward by d.
	JumpClock(ctx context.Context, d time.Duration) error
}

// Group is a replicated topology a fault acts on as a whole; *target.Sentinel is one.
type Group interface {
	// Synced waits until the replica has what the master has written so far.
	Synced(ctx context.Context) (string, error)
	KillMaster(ctx context.Context) (string, error)
	Partition(ctx context.Context, d time.Duration) (string, error)
}

// Slots is a Redis Cluster a fault acts on by a key's slot; *target.Cluster is one.
type Slots interface {
	// Synced waits until the replicas of key's master have what it has written so far.
	Synced(ctx context.Context, key string) (string, error)
	KillMaster(ctx context.Context, key string) (string, error)
	Migrate(ctx context.Context, key string) (string, error)
}

// Link is the network path through which buyers reach one server.
type Link interface {
	AddToxic(name, kind string, attrs map[string]any) error
	RemoveToxic(name string) error
}

// Servers is what a plan acts on.
type Servers struct {
	// Lock is the first lock server; its Admin client reaches it directly.
	Lock Server
	// Locks is every lock server, Lock first, when the harness started them all.
	Locks []Server
	Admin redis.UniversalClient
	// Replica is Lock's standby, for Failover.
	Replica Server
	// LockLink is the path to Lock; Links are every path, for NetLatency.
	LockLink Link
	Links    []Link
	// AppLinks, when each application instance reaches the lock servers through paths
	// of its own (Needs.PerApp), returns them by instance (from 0), each in the lock
	// servers' order: AppBlackhole cuts one instance's, and the faults on every path
	// (NetLatency, NetTimeout) act on every instance's.
	AppLinks func() [][]Link
	// Sentinel is the Sentinel group the sale runs on, for the Sentinel faults.
	Sentinel Group
	// Cluster is the Redis Cluster the sale runs on, for the cluster faults.
	Cluster Slots
}

// Who is the victim a server fault strikes while it works: as the record names it, and
// the application instance (from 0) that serves it, for a fault that cuts one instance.
type Who struct {
	Name string
	App  int
}

func (w Who) String() string { return w.Name }

// Event is something a fault did, for the record.
type Event struct {
	At time.Duration `json:"at_ns"`
	// Began, for a fault on a server, is when it struck; At is when it was over (a pause
	// ended, a restarted server answered). Zero for a fault of one moment.
	Began  time.Duration `json:"began_ns,omitempty"`
	Fault  Kind          `json:"fault"`
	Detail string        `json:"detail"`
	Err    string        `json:"error,omitempty"`
}

// Injector carries out a plan during one sale. Buyers and workers report to it as they
// go; it tells a victim what to do and acts on the servers. Its methods are safe for
// concurrent use.
type Injector struct {
	plan    Plan
	armed   []armed // plan's faults with their entries, looked up once
	srv     Servers
	ttl     time.Duration
	started time.Time
	prefix  string
	seed    uint64
	persist Persistence // what a restart gives back

	calls atomic.Int64 // buyers' calls so far, for LatencySpike

	holds      atomic.Int64 // holders that read the stock so far
	purchases  atomic.Int64 // lock-free purchases started so far
	deliveries atomic.Int64 // tasks queue workers took so far
	steps      sync.Map     // step name -> *atomic.Int64, the reports of it so far
	reaped     atomic.Bool  // a round of reapers in step handed a task back

	mu     sync.Mutex
	events []Event
	hit    map[Kind]int // the plan's faults that struck, and how often
	fired  sync.WaitGroup
	// inFlight counts the server faults under way, under names their begins; settledAt
	// is when the last one ended.
	inFlight  int
	under     map[*sync.WaitGroup]Event
	settledAt time.Time
	// halt ends with Stop: what a fault does in the background stops with it.
	halt context.Context
	stop context.CancelFunc
	bg   sync.WaitGroup
}

// New returns an injector for plan on srv, for a sale whose locks live for ttl (a
// queue's tasks stay with their worker for ttl); prefix is the sale's key prefix, for
// the keys a fault writes, and seed draws the victims of faults that strike at a rate.
func New(plan Plan, srv Servers, ttl time.Duration, prefix string, seed uint64) (*Injector, error) {
	n := plan.Needs()
	switch {
	case n.Owned && srv.Lock == nil:
		return nil, fmt.Errorf("faults %s act on the lock server: it must be one the harness starts, not an external one", plan)
	case n.AllLocks && len(srv.Locks) == 0:
		return nil, fmt.Errorf("faults %s act on every lock server: the harness must have started them all", plan)
	case n.Replica && srv.Replica == nil:
		return nil, fmt.Errorf("fault %s needs a replica of the lock server", Failover)
	case n.Sentinel && srv.Sentinel == nil:
		return nil, fmt.Errorf("faults %s need the sale on a Sentinel group the harness starts", plan)
	case n.Cluster && srv.Cluster == nil:
		return nil, fmt.Errorf("faults %s need the sale on a Redis Cluster the harness starts", plan)
	case n.Proxy && srv.LockLink == nil:
		return nil, fmt.Errorf("faults %s need toxiproxy between buyers and Redis", plan)
	case n.PerApp && n.Proxy && srv.AppLinks == nil:
		return nil, fmt.Errorf("faults %s cut one application instance off: each needs paths of its own to the lock servers", plan)
	}
	halt, stop := context.WithCancel(context.Background())
	in := &Injector{plan: plan, srv: srv, ttl: ttl, prefix: prefix, seed: seed, halt: halt, stop: stop, hit: make(map[Kind]int),
		persist: n.Persist, under: make(map[*sync.WaitGroup]Event)}
	for _, f := range plan {
		in.armed = append(in.armed, armed{f, spec(f.Kind)})
	}
	return in, nil
}

// armed is a fault of the plan with its entry in the table.
type armed struct {
	Fault
	spec Spec
}

// strikes reports whether the nth victim (1-based) is one of a's; a fault at a rate
// draws whether it is, by key (the buyer, or n), from seed.
func (a armed) strikes(n, key int, seed uint64) bool {
	if p := a.rate(); p > 0 {
		return draw(seed, a.Kind, key, 0) < p
	}
	if a.spec.span {
		return n >= a.nth() && n < a.nth()+a.count()
	}
	return n == a.nth()
}

// Start sets up the faults that last the whole sale; call it just before buyers start.
func (in *Injector) Start(ctx context.Context) error {
	in.started = time.Now()
	for _, a := range in.armed {
		if a.spec.start == nil {
			continue
		}
		detail, err := a.spec.start(ctx, in, a.Fault)
		in.record(a.Kind, detail, err)
		if err != nil {
			return fmt.Errorf("faults: start %s: %w", a.Kind, err)
		}
		if a.spec.Fires == AtStart {
			in.strikes(a.Kind)
		}
	}
	return nil
}

// Stop ends what Start began and waits for faults in flight.
func (in *Injector) Stop() {
	in.stop()
	in.bg.Wait()
	in.fired.Wait()
}

// NotFired lists the plan's faults that never struck: a victim that never came (its
// Nth holder, purchase or task was never reached) or a design that has no part the
// fault acts on (a holder fault on a design without a holder). A sale's verdict says
// nothing about them.
func (in *Injector) NotFired() []Kind {
	in.mu.Lock()
	defer in.mu.Unlock()
	var out []Kind
	for _, f := range in.plan {
		if in.hit[f.Kind] == 0 {
			out = append(out, f.Kind)
		}
	}
	return out
}

// Events returns what the faults did, in order; a fault at a rate has its first
// eventsEach victims told one by one, and then how many it struck in all.
func (in *Injector) Events() []Event {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := append([]Event(nil), in.events...)
	for _, a := range in.armed {
		if n := in.hit[a.Kind]; a.rate() > 0 && n > eventsEach {
			out = append(out, Event{At: time.Since(in.started), Fault: a.Kind,
				Detail: fmt.Sprintf("struck %d victims in all at a rate of %g (the first %d are listed)", n, a.rate(), eventsEach)})
		}
	}
	return out
}

// Under returns the server faults under way now, each with when it began and At now: a
// live view's open windows, which Events gives once they are over.
func (in *Injector) Under() []Event {
	in.mu.Lock()
	defer in.mu.Unlock()
	now := time.Since(in.started)
	var out []Event
	for _, e := range in.under {
		e.At = now
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Event) int { return cmp.Compare(a.Began, b.Began) })
	return out
}

// eventsEach is how many victims of a fault at a rate are recorded one by one.
const eventsEach = 10

// Struck is how many times fault k struck so far.
func (in *Injector) Struck(k Kind) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.hit[k]
}

// strikes marks fault k as having struck, so that its sale's verdict covers it, and
// reports whether the strike is still to be recorded one by one.
func (in *Injector) strikes(k Kind) bool {
	in.mu.Lock()
	in.hit[k]++
	n := in.hit[k]
	in.mu.Unlock()
	return n <= eventsEach
}

func (in *Injector) record(k Kind, detail string, err error) { in.recordSince(k, 0, detail, err) }

// recordSince records what a fault that struck at began did, now that it is over.
func (in *Injector) recordSince(k Kind, began time.Duration, detail string, err error) {
	e := Event{At: time.Since(in.started), Began: began, Fault: k, Detail: detail}
	if err != nil {
		e.Err = err.Error()
	}
	in.mu.Lock()
	in.events = append(in.events, e)
	in.mu.Unlock()
}

// CrashesAcquiring reports whether buyer (0-based) dies halfway through taking the lock.
func (in *Injector) CrashesAcquiring(buyer int) bool {
	for _, a := range in.armed {
		if a.spec.Fires == OnAcquire && buyer == a.nth()-1 {
			in.strikes(a.Kind)
			in.record(a.Kind, fmt.Sprintf("buyer %d dies taking the lock", buyer), nil)
			return true
		}
	}
	return false
}

// Victim is what a holder must do after reading the stock, or a queue worker after taking
// a task. The zero Victim goes on.
type Victim struct {
	// Crash: stop for good, holding the lock (no write, no release), or the task.
	Crash bool
	// CrashLate: a queue worker dies after fulfilling the task, before acking it.
	CrashLate bool
	// FreezeUntil, when set, is when a stop-the-world pause ends: the lease's background
	// work stops until then.
	FreezeUntil time.Time
	// StarveUntil, when set, is when a CPU starvation ends: until then the holder's
	// process runs StarveRun of every StarvePeriod (lockimpl.Starver).
	StarveUntil time.Time
	// Term: the holder's (worker's) process is sent SIGTERM, and SIGKILL after Grace
	// (lockimpl.Terminator).
	Term  bool
	Grace time.Duration
	// AppPauseUntil, when set, is when a stop-the-world pause of every process of the
	// holder's application instance ends (lockimpl.AppPauser).
	AppPauseUntil time.Time
	// Until is when the holder may write: it keeps working, or paused, until then.
	Until time.Time
	// Evict, when set, is the class of the design's keys the queue server evicts while
	// the worker holds its task; the worker then dies. A design that keeps no key of
	// the class is not struck (EvictLease, EvictJob).
	Evict KeyClass
	// Churn: the worker dies and its consumer is deleted from the group, for a design
	// whose workers are consumers of one (ConsumerChurn); another design's worker lives.
	Churn bool
	// await, when set, is a server fault in flight: the holder writes only once it is
	// over and margin has passed.
	await  *sync.WaitGroup
	margin time.Duration
}

// AppPaused is v for a holder whose whole application instance was stopped until
// AppPauseUntil (lockimpl.AppPauser): the holder, one of its processes, is frozen as a
// paused holder is, and writes only once the instance runs again.
func (v Victim) AppPaused() Victim {
	v.FreezeUntil, v.Until = later(v.FreezeUntil, v.AppPauseUntil), later(v.Until, v.AppPauseUntil)
	return v
}

// Wait blocks until the victim may write, or ctx ends.
func (v Victim) Wait(ctx context.Context) error {
	if v.await != nil {
		done := make(chan struct{})
		go func() { v.await.Wait(); close(done) }()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
		}
		v.Until = time.Now().Add(v.margin)
	}
	return wait.Until(ctx, v.Until)
}

// Held is called by each holder (buyer, from 0) right after it read the stock, with the
// application instance that serves it (from 0); it returns what the holder must do.
// Holders are numbered in the order they read; a fault at a rate draws its victims by
// buyer, so that the same seed strikes the same buyers.
func (in *Injector) Held(buyer, app int) Victim {
	n := int(in.holds.Add(1))
	return in.victim(n, buyer, Who{"holder", app}, n)
}

// Firing is Held for a scheduled drop's scheduler instance (from 1), served by app, that
// holds the lock with wave (from 0) due: holds are numbered among those that have a wave
// to fire, and the record names the scheduler and its wave.
func (in *Injector) Firing(scheduler, wave, app int) Victim {
	n := int(in.holds.Add(1))
	return in.victim(n, wave, Who{fmt.Sprintf("scheduler %d, firing wave", scheduler), app}, wave+1)
}

// Delivered is called by a queue worker right after it took a task; it returns what the
// worker must do. Tasks are numbered in the order they were taken.
func (in *Injector) Delivered() Victim {
	n := int(in.deliveries.Add(1))
	return in.victim(n, n, Who{Name: "the worker with task"}, n)
}

// victim is what the plan makes of victim n (who, drawn by key at a rate): its own fate,
// and the server faults it must wait out. The record calls it who and shown.
func (in *Injector) victim(n, key int, who Who, shown int) Victim {
	var v Victim
	for _, a := range in.armed {
		if a.spec.Fires != OnVictim || !a.strikes(n, key, in.seed) {
			continue
		}
		d := a.length(in.ttl, in.seed, key)
		if a.spec.victim != nil {
			fate, did := a.spec.victim(a.Fault, d, in.ttl)
			v = merge(v, fate)
			if did != "" && in.strikes(a.Kind) {
				in.record(a.Kind, fmt.Sprintf("%s %d %s", who, shown, did), nil)
			}
		}
		if a.spec.server != nil {
			v.await, v.margin = in.fire(a, Who{fmt.Sprintf("%s %d", who, shown), who.App}), in.margin()
		}
	}
	return v
}

// Reapers is how many reapers a design with one runs at once: ReapersInStep under
// Reclaimers, one otherwise.
func (in *Injector) Reapers() int {
	if in.plan.Has(Reclaimers) {
		return ReapersInStep
	}
	return 1
}

// Reaped is told what a round of reapers in step handed back, each's count; the first
// round that handed anything back is the record of what they did.
func (in *Injector) Reaped(moved []int) {
	total := 0
	for _, n := range moved {
		total += n
	}
	if total == 0 || in.reaped.Swap(true) {
		return
	}
	in.Strike(Reclaimers, fmt.Sprintf("%d reapers in step handed back %v tasks (%d in all) in one round", len(moved), moved, total))
}

// Strike records what fault k did to a victim, for a fault whose victim only the sale
// can strike (TermHolder, WorkerTerm: a holder or worker with a process of its own).
func (in *Injector) Strike(k Kind, did string) {
	if in.strikes(k) {
		in.record(k, did, nil)
	}
}

// Steps are the steps the plan strikes at (StepTerm), which an adapter that names them
// is asked to report; nil when it strikes at none.
func (in *Injector) Steps() []string {
	var out []string
	for _, a := range in.armed {
		if a.spec.Fires == OnStep && !slices.Contains(out, a.step()) {
			out = append(out, a.step())
		}
	}
	return out
}

// Stepped is called each time a process adapter's worker reports reaching step, with
// what it says of where (the order it took); it reports whether that process is to be
// sent SIGTERM now, and the grace before its SIGKILL. Reports are numbered by step in
// the order they come.
func (in *Injector) Stepped(step, where string) (grace time.Duration, strike bool) {
	c, _ := in.steps.LoadOrStore(step, new(atomic.Int64))
	n := int(c.(*atomic.Int64).Add(1))
	for _, a := range in.armed {
		if a.spec.Fires != OnStep || a.step() != step || !a.strikes(n, n, in.seed) {
			continue
		}
		grace = time.Duration(float64(in.ttl) * WorkerTermGrace)
		if in.strikes(a.Kind) {
			in.record(a.Kind, fmt.Sprintf("the worker process at step %s (%s, its report %d) sent SIGTERM, SIGKILL %s later", step, where, n, grace), nil)
		}
		return grace, true
	}
	return 0, false
}

// merge combines the fates of two faults striking one victim.
func merge(a, b Victim) Victim {
	a.Crash, a.CrashLate = a.Crash || b.Crash, a.CrashLate || b.CrashLate
	a.Until, a.FreezeUntil = later(a.Until, b.Until), later(a.FreezeUntil, b.FreezeUntil)
	a.StarveUntil, a.AppPauseUntil = later(a.StarveUntil, b.StarveUntil), later(a.AppPauseUntil, b.AppPauseUntil)
	a.Term, a.Grace = a.Term || b.Term, max(a.Grace, b.Grace)
	a.Evict, a.Churn = cmp.Or(a.Evict, b.Evict), a.Churn || b.Churn
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Purchasing is called by lock-free designs as each purchase starts; server faults fire
// at the Nth, without a holder to wait for them. A design that reads the stock, works
// and then writes (optimistically, as WATCH does) thinks: slow work and a client pause
// then stretch the Nth purchase's work, and the Victim returned says until when. A
// design that does not think (one script) takes no holder fault: those stay unfired.
func (in *Injector) Purchasing(thinks bool) Victim {
	n := int(in.purchases.Add(1))
	var v Victim
	for _, a := range in.armed {
		if a.spec.Fires != OnVictim || !a.strikes(n, n, in.seed) {
			continue
		}
		switch {
		case a.spec.server != nil:
			in.fire(a, Who{Name: fmt.Sprintf("purchase %d", n)})
		case a.spec.thinks && thinks:
			d := a.length(in.ttl, in.seed, n)
			v.Until = later(v.Until, time.Now().Add(d))
			if in.strikes(a.Kind) {
				in.record(a.Kind, fmt.Sprintf("purchase %d works %s between its read and its write", n, d), nil)
			}
		}
	}
	return v
}

// margin is how long a victim keeps the lock after a server fault is over: long enough
// for another buyer, polling, to take the lock and read the stock, short enough that the
// victim's lock would still be alive had the fault not happened.
func (in *Injector) margin() time.Duration { return max(in.ttl/2, 100*time.Millisecond) }

// fire starts server fault a in the background and returns what to wait on. A fault,
// once begun, is carried through even when the sale is stopped, until Stop: a pause then
// ends early, and the server is resumed.
func (in *Injector) fire(a armed, who Who) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	in.fired.Add(1)
	in.strikes(a.Kind)
	began := time.Since(in.started)
	in.mu.Lock()
	in.inFlight++
	in.under[&wg] = Event{Began: began, Fault: a.Kind, Detail: "under way (" + who.Name + ")"}
	in.mu.Unlock()
	go func() {
		defer in.fired.Done()
		defer wg.Done()
		detail, err := a.spec.server(in.halt, in, a.Fault, a.lasting(in.ttl), who)
		in.recordSince(a.Kind, began, detail, err)
		in.mu.Lock()
		in.inFlight--
		delete(in.under, &wg)
		in.settledAt = time.Now()
		in.mu.Unlock()
	}()
	return &wg
}

// ServersSettled is when the servers last came back from a fault: now while one is under
// way, zero when none struck. A sale that ends once nothing happens for a while counts
// from here, not through a restart's downtime.
func (in *Injector) ServersSettled() time.Time {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.inFlight > 0 {
		return time.Now()
	}
	return in.settledAt
}

// length is how long a's victim (by key) suffers: the fault's length, drawn from its
// distribution.
func (a armed) length(ttl time.Duration, seed uint64, key int) time.Duration {
	return cmp.Or(a.Dist, Fixed).draw(a.lasting(ttl), draw(seed, a.Kind, key, 1))
}

// Spike is the buyers' latency spikes: nil when the plan has none, else a func that
// each buyer's call calls before it goes out, which says how long it must wait first
// (zero for most calls). Calls are numbered in the order they ask.
func (in *Injector) Spike() func() time.Duration {
	for _, a := range in.armed {
		if a.Kind != LatencySpike {
			continue
		}
		p, d := a.rate(), a.spike()
		return func() time.Duration {
			n := int(in.calls.Add(1))
			if draw(in.seed, LatencySpike, n, 0) >= p {
				return 0
			}
			if in.strikes(LatencySpike) {
				in.record(LatencySpike, fmt.Sprintf("call %d waits %s", n, d), nil)
			}
			return d
		}
	}
	return nil
}

// draw is a number in [0, 1) that depends only on seed, the fault, the victim's key and
// what is drawn (which): the same seed draws the same victims and lengths.
func draw(seed uint64, k Kind, key, which int) float64 {
	h := uint64(14695981039346656037) // FNV-1a of the fault's name, without allocating
	for i := range len(k) {
		h = (h ^ uint64(k[i])) * 1099511628211
	}
	z := seed ^ h + uint64(key+1)*0x9e3779b97f4a7c15 + uint64(which)*0xd1b54a32d192ed03
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}
