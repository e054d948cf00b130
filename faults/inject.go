package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// Server is a lock server a fault acts on; *target.Target is one.
type Server interface {
	Pause(ctx context.Context, d time.Duration) error
	Restart(ctx context.Context) error
	Kill(ctx context.Context) error
	Redirect(addr string)
	Addr() string
	Detach(ctx context.Context) error
}

// Link is the network path through which buyers reach one server.
type Link interface {
	AddToxic(name, kind string, attrs map[string]any) error
	RemoveToxic(name string) error
}

// Servers is what a plan acts on.
type Servers struct {
	// Lock is the first lock server; its Admin client reaches it directly.
	Lock  Server
	Admin redis.UniversalClient
	// Replica is Lock's standby, for Failover.
	Replica Server
	// LockLink is the path to Lock; Links are every path, for NetLatency.
	LockLink Link
	Links    []Link
}

// Event is something a fault did, for the record.
type Event struct {
	At     time.Duration `json:"at_ns"`
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

	holds      atomic.Int64 // holders that read the stock so far
	purchases  atomic.Int64 // lock-free purchases started so far
	deliveries atomic.Int64 // tasks queue workers took so far

	mu     sync.Mutex
	events []Event
	hit    map[Kind]bool // the plan's faults that struck
	fired  sync.WaitGroup
	// halt ends with Stop: what a fault does in the background stops with it.
	halt context.Context
	stop context.CancelFunc
	bg   sync.WaitGroup
}

// New returns an injector for plan on srv, for a sale whose locks live for ttl (a
// queue's tasks stay with their worker for ttl); prefix is the sale's key prefix, for
// the keys a fault writes.
func New(plan Plan, srv Servers, ttl time.Duration, prefix string) (*Injector, error) {
	n := plan.Needs()
	switch {
	case n.Owned && srv.Lock == nil:
		return nil, fmt.Errorf("faults %s act on the lock server: it must be one the harness starts, not an external one", plan)
	case n.Replica && srv.Replica == nil:
		return nil, fmt.Errorf("fault %s needs a replica of the lock server", Failover)
	case n.Proxy && srv.LockLink == nil:
		return nil, fmt.Errorf("faults %s need toxiproxy between buyers and Redis", plan)
	}
	halt, stop := context.WithCancel(context.Background())
	in := &Injector{plan: plan, srv: srv, ttl: ttl, prefix: prefix, halt: halt, stop: stop, hit: make(map[Kind]bool)}
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

// strikes reports whether the nth victim (1-based) is one of a's.
func (a armed) strikes(n int) bool {
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
		if !in.hit[f.Kind] {
			out = append(out, f.Kind)
		}
	}
	return out
}

// Events returns what the faults did, in order.
func (in *Injector) Events() []Event {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Event(nil), in.events...)
}

// strikes marks fault k as having struck, so that its sale's verdict covers it.
func (in *Injector) strikes(k Kind) {
	in.mu.Lock()
	in.hit[k] = true
	in.mu.Unlock()
}

func (in *Injector) record(k Kind, detail string, err error) {
	e := Event{At: time.Since(in.started), Fault: k, Detail: detail}
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
	// Until is when the holder may write: it keeps working, or paused, until then.
	Until time.Time
	// await, when set, is a server fault in flight: the holder writes only once it is
	// over and margin has passed.
	await  *sync.WaitGroup
	margin time.Duration
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

// Held is called by each holder right after it read the stock; it returns what the
// holder must do. Holders are numbered in the order they read.
func (in *Injector) Held() Victim {
	n := int(in.holds.Add(1))
	return in.victim(n, fmt.Sprintf("holder %d", n))
}

// Delivered is called by a queue worker right after it took a task; it returns what the
// worker must do. Tasks are numbered in the order they were taken.
func (in *Injector) Delivered() Victim {
	n := int(in.deliveries.Add(1))
	return in.victim(n, fmt.Sprintf("the worker with task %d", n))
}

// victim is what the plan makes of victim n (who): its own fate, and the server faults
// it must wait out.
func (in *Injector) victim(n int, who string) Victim {
	var v Victim
	for _, a := range in.armed {
		if a.spec.Fires != OnVictim || !a.strikes(n) {
			continue
		}
		d := a.lasting(in.ttl)
		if a.spec.victim != nil {
			fate, did := a.spec.victim(a.Fault, d)
			v = merge(v, fate)
			in.strikes(a.Kind)
			in.record(a.Kind, who+" "+did, nil)
		}
		if a.spec.server != nil {
			v.await, v.margin = in.fire(a, who), in.margin()
		}
	}
	return v
}

// merge combines the fates of two faults striking one victim.
func merge(a, b Victim) Victim {
	a.Crash, a.CrashLate = a.Crash || b.Crash, a.CrashLate || b.CrashLate
	a.Until, a.FreezeUntil = later(a.Until, b.Until), later(a.FreezeUntil, b.FreezeUntil)
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
		if a.spec.Fires != OnVictim || !a.strikes(n) {
			continue
		}
		switch {
		case a.spec.server != nil:
			in.fire(a, fmt.Sprintf("purchase %d", n))
		case a.spec.thinks && thinks:
			d := a.lasting(in.ttl)
			v.Until = later(v.Until, time.Now().Add(d))
			in.strikes(a.Kind)
			in.record(a.Kind, fmt.Sprintf("purchase %d works %s between its read and its write", n, d), nil)
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
func (in *Injector) fire(a armed, who string) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	in.fired.Add(1)
	in.strikes(a.Kind)
	go func() {
		defer in.fired.Done()
		defer wg.Done()
		detail, err := a.spec.server(in.halt, in, a.lasting(in.ttl), who)
		in.record(a.Kind, detail, err)
	}()
	return &wg
}
