package faults

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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

// Injector carries out a plan during one sale. Buyers report to it as they go; it tells
// the victim what to do and acts on the servers. Its methods are safe for concurrent use.
type Injector struct {
	plan    Plan
	srv     Servers
	ttl     time.Duration
	started time.Time
	prefix  string

	holds      atomic.Int64 // holders that read the stock so far
	purchases  atomic.Int64 // lock-free purchases started so far
	deliveries atomic.Int64 // tasks queue workers took so far

	mu     sync.Mutex
	events []Event
	hit    map[Kind]bool // the plan's faults that fired
	fired  sync.WaitGroup
	// halt ends with Stop: what a fault does in the background stops with it.
	halt context.Context
	stop context.CancelFunc
	bg   sync.WaitGroup
}

// New returns an injector for plan on srv, for a sale whose locks live for ttl; prefix is
// the sale's key prefix, for the keys a fault writes.
func New(plan Plan, srv Servers, ttl time.Duration, prefix string) (*Injector, error) {
	n := plan.Needs()
	switch {
	case n.Owned && srv.Lock == nil:
		return nil, fmt.Errorf("faults %s act on the lock server: it must be one the harness starts (not --redis-url)", plan)
	case n.Replica && srv.Replica == nil:
		return nil, fmt.Errorf("fault failover needs a replica of the lock server")
	case n.Proxy && srv.LockLink == nil:
		return nil, fmt.Errorf("faults %s need toxiproxy between buyers and Redis", plan)
	}
	halt, stop := context.WithCancel(context.Background())
	return &Injector{plan: plan, srv: srv, ttl: ttl, prefix: prefix, halt: halt, stop: stop, hit: make(map[Kind]bool)}, nil
}

// fires marks fault k as having struck, so that its sale's verdict covers it.
func (in *Injector) fires(k Kind) {
	in.mu.Lock()
	in.hit[k] = true
	in.mu.Unlock()
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

// Start sets up the faults that last the whole sale; call it just before buyers start.
func (in *Injector) Start(ctx context.Context) error {
	in.started = time.Now()
	for _, f := range in.plan {
		var err error
		switch f.Kind {
		case Failover:
			// The replica stops here: every lock granted from now on is on the primary only.
			err = in.srv.Replica.Detach(ctx)
			in.record(f.Kind, "replica detached from the lock server", err)
		case NetLatency:
			if err = in.latency(f); err == nil {
				in.fires(f.Kind)
			}
		case Evict:
			if err = in.startEviction(ctx); err == nil {
				in.fires(f.Kind)
			}
		}
		if err != nil {
			return fmt.Errorf("faults: start %s: %w", f.Kind, err)
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

// Events returns what the faults did, in order.
func (in *Injector) Events() []Event {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Event(nil), in.events...)
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

// CrashesAcquiring reports whether buyer (0-based) is the CrashAcquire victim: it dies
// halfway through taking the lock.
func (in *Injector) CrashesAcquiring(buyer int) bool {
	for _, f := range in.plan {
		if f.Kind == CrashAcquire && buyer == f.nth()-1 {
			in.fires(f.Kind)
			in.record(f.Kind, fmt.Sprintf("buyer %d dies taking the lock", buyer), nil)
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
	if d := time.Until(v.Until); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// Held is called by each holder right after it read the stock; it returns what the
// holder must do. Holders are numbered in the order they read.
func (in *Injector) Held(ctx context.Context) Victim {
	n := int(in.holds.Add(1))
	var v Victim
	for _, f := range in.plan {
		if f.nth() != n {
			continue
		}
		d := f.lasting(in.ttl)
		switch f.Kind {
		case SlowWork:
			v.Until = time.Now().Add(d)
			in.fires(f.Kind)
			in.record(f.Kind, fmt.Sprintf("holder %d works %s", n, d), nil)
		case ClientPause:
			v.Until = time.Now().Add(d)
			v.FreezeUntil = v.Until
			in.fires(f.Kind)
			in.record(f.Kind, fmt.Sprintf("holder %d paused %s, renewals too", n, d), nil)
		case CrashHolder:
			v.Crash = true
			in.fires(f.Kind)
			in.record(f.Kind, fmt.Sprintf("holder %d dies holding the lock", n), nil)
		case RedisPause, RedisRestart, Failover, NetTimeout:
			v.await, v.margin = in.fire(f, fmt.Sprintf("holder %d", n)), in.margin()
		}
	}
	return v
}

// Delivered is called by a queue worker right after it took a task; it returns what the
// worker must do. Tasks are numbered in the order they were taken.
func (in *Injector) Delivered(ctx context.Context) Victim {
	n := int(in.deliveries.Add(1))
	var v Victim
	for _, f := range in.plan {
		switch {
		case (f.Kind == WorkerCrash || f.Kind == WorkerCrashLate) && n >= f.nth() && n < f.nth()+f.count():
			v.Crash, v.CrashLate = f.Kind == WorkerCrash, f.Kind == WorkerCrashLate
			in.fires(f.Kind)
			in.record(f.Kind, fmt.Sprintf("the worker with task %d dies", n), nil)
		case f.Kind == WorkerPause && n == f.nth():
			d := f.lasting(in.ttl)
			v.Until = time.Now().Add(d)
			in.fires(f.Kind)
			in.record(f.Kind, fmt.Sprintf("the worker with task %d stalls %s", n, d), nil)
		case f.Kind == RedisRestart && n == f.nth():
			v.await, v.margin = in.fire(f, fmt.Sprintf("the worker with task %d", n)), in.margin()
		}
	}
	return v
}

// Purchasing is called by lock-free designs as each purchase starts; server faults fire
// at the Nth, without a holder to wait for them. A design that reads the stock, works
// and then writes (optimistically, as WATCH does) thinks: slow work and a client pause
// then stretch the Nth purchase's work, and the Victim returned says until when. A
// design that does not think (one script) takes no holder fault: those stay unfired.
func (in *Injector) Purchasing(ctx context.Context, thinks bool) Victim {
	n := int(in.purchases.Add(1))
	var v Victim
	for _, f := range in.plan {
		if f.nth() != n {
			continue
		}
		switch f.Kind {
		case RedisPause, RedisRestart, Failover, NetTimeout:
			in.fire(f, fmt.Sprintf("purchase %d", n))
		case SlowWork, ClientPause:
			if thinks {
				d := f.lasting(in.ttl)
				v.Until = time.Now().Add(d)
				in.fires(f.Kind)
				in.record(f.Kind, fmt.Sprintf("purchase %d works %s between its read and its write", n, d), nil)
			}
		}
	}
	return v
}

// margin is how long a victim keeps the lock after a server fault is over: long enough
// for another buyer, polling, to take the lock and read the stock, short enough that the
// victim's lock would still be alive had the fault not happened.
func (in *Injector) margin() time.Duration { return max(in.ttl/2, 100*time.Millisecond) }

// fire starts server fault f in the background and returns what to wait on. A fault,
// once begun, is carried through even when the sale is stopped, until Stop: a pause then
// ends early, and the server is resumed.
func (in *Injector) fire(f Fault, who string) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	in.fired.Add(1)
	in.fires(f.Kind)
	ctx := in.halt
	go func() {
		defer in.fired.Done()
		defer wg.Done()
		d := f.lasting(in.ttl)
		var err error
		var detail string
		switch f.Kind {
		case RedisPause:
			detail = fmt.Sprintf("lock server paused %s while %s holds the lock", d, who)
			err = in.srv.Lock.Pause(ctx, d)
		case RedisRestart:
			detail = fmt.Sprintf("lock server killed and restarted empty while %s holds it", who)
			err = in.srv.Lock.Restart(ctx)
		case Failover:
			detail = fmt.Sprintf("lock server killed; its replica, detached before, serves in its place while %s holds the lock", who)
			// Clients move first, as a sentinel tells them to; then the old primary dies.
			in.srv.Lock.Redirect(in.srv.Replica.Addr())
			err = in.srv.Lock.Kill(ctx)
		case NetTimeout:
			detail = fmt.Sprintf("network to the lock server carries nothing for %s while %s holds the lock", d, who)
			err = in.outage(ctx, d)
		}
		in.record(f.Kind, detail, err)
	}()
	return &wg
}
