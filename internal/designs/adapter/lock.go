package adapter

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
)

// Config is an adapter as the command line names it.
type Config struct {
	// Name is the design's name; Command the program and its arguments, split on
	// spaces (a path with spaces belongs in a script of its own).
	Name, Command string
	// Procs is the pool's size. Default: the sale's connections.
	Procs int
	// Nodes is how many independent lock servers a lock adapter takes a majority of,
	// for one that supports nodes (Redlock's five). Default: 1.
	Nodes int
	// Patience is how long a call but hello may wait for its reply before the adapter
	// is said to hang (unless a fault paused it). Default: DefaultPatience.
	Patience time.Duration
	// Ms: its hello said it supports ms (SupportsMs), its leases kept to the
	// millisecond. Set once probed.
	Ms bool
}

// DefaultPatience is how long a call waits for its reply, as PROTOCOL.md promises.
const DefaultPatience = 15 * time.Second

// Lock is the lock design the adapter cfg runs: a Locker, or a Purchaser when the
// adapter supports buy, whose pool starts with each sale and stops with it.
func Lock(cfg Config, buys bool) lockimpl.Impl {
	// Whole seconds until its hello says otherwise (Config.Ms): nothing is known of a
	// lease it does not describe.
	impl := lockimpl.Impl{Name: cfg.Name, Summary: "process adapter: " + cfg.Command, Procs: cfg.size, Nodes: cfg.Nodes, Seconds: !cfg.Ms}
	if buys {
		impl.NewPurchaser = func(e lockimpl.Env) lockimpl.Purchaser {
			d := newDesign(cfg, e)
			d.buys = true
			return &purchaser{design: d}
		}
	} else {
		impl.NewLocker = func(e lockimpl.Env) lockimpl.Locker { return &locker{design: newDesign(cfg, e)} }
	}
	return impl
}

// Probe starts one process of cfg, says hello and stops it: an adapter that cannot
// start, answers hello wrong or documents what no sale can earn is found before a sale.
// It returns what the adapter supports.
func Probe(ctx context.Context, cfg Config, c redis.UniversalClient) ([]string, error) {
	d := newDesign(cfg, lockimpl.Env{Locks: []redis.UniversalClient{c}})
	return d.probe(ctx, c, func(r *Redis) request {
		return d.hello(r, lockimpl.Sale{Lock: "{stockbench:probe}:lock", TTL: time.Second, Stock: lockimpl.NewStock("{stockbench:probe}")})
	})
}

// design is what a Locker, a Purchaser and a queue of an adapter share: the pool's life,
// and the front its processes dial.
type design struct {
	cfg   Config
	buys  bool
	argv  []string
	env   lockimpl.Env
	pool  *pool
	front *front
	// nodes are the fronts of the lock servers past the first, for an adapter whose
	// lock takes several.
	nodes []*front
	// stepped is the sale's ear for the steps a queue adapter reports (step-term).
	stepped func(step, where string) (time.Duration, bool)
}

func newDesign(cfg Config, e lockimpl.Env) *design {
	return &design{cfg: cfg, argv: strings.Fields(cfg.Command), env: e}
}

// hello is a lock's hello, the adapter connecting to r.
func (d *design) hello(r *Redis, s lockimpl.Sale) request {
	return request{Op: "hello", Protocol: 1, Versions: versions, Redis: r, TTLms: s.TTL.Milliseconds(),
		TermGraceMs: faults.TermGrace.Milliseconds(), Keys: &Keys{Lock: s.Lock, Stock: s.Stock.Key, Orders: s.Stock.Orders}}
}

// server is the server the adapter works on: a lock's lock server; for a whole purchase,
// the stock's, wherever the sale keeps it.
func (d *design) server() redis.UniversalClient {
	if d.buys && d.env.Stock != nil {
		return d.env.Stock
	}
	return d.env.Locks[0]
}

// where is what hello says of c: the front's address when there is one, else the
// client's own; and the Sentinel group or the cluster, when the sale's Redis is one.
func (d *design) where(c redis.UniversalClient) *Redis {
	r := Redis{}
	switch c := c.(type) {
	case *redis.Client:
		o := c.Options()
		r = Redis{Addr: o.Addr, Username: o.Username, Password: o.Password, DB: o.DB}
	case *redis.ClusterClient:
		o := c.Options()
		r = Redis{Username: o.Username, Password: o.Password, Cluster: o.Addrs}
		if len(o.Addrs) > 0 {
			r.Addr = o.Addrs[0]
		}
	}
	if d.front != nil {
		r.Addr = d.front.Addr()
	}
	if len(d.nodes) > 0 {
		r.Nodes = []string{r.Addr}
		for _, f := range d.nodes {
			r.Nodes = append(r.Nodes, f.Addr())
		}
	}
	if t := d.env.Topology; t != nil {
		if len(t.Sentinels) > 0 {
			r.Sentinel = &Sentinel{Addrs: t.Sentinels, Master: t.Master}
		}
		if len(t.Cluster) > 0 {
			r.Cluster = t.Cluster
		}
	}
	return &r
}

// Start implements lockimpl.Starter.
func (d *design) Start(ctx context.Context, s lockimpl.Sale) error {
	if !d.buys {
		for _, c := range d.env.Locks[1:] {
			f, err := newFront(c)
			if err == nil && f == nil {
				err = fmt.Errorf("adapter %s: its lock takes %d servers: they must be servers the harness reaches directly", d.cfg.Name, len(d.env.Locks))
			}
			if err != nil {
				d.closeFront()
				return err
			}
			d.nodes = append(d.nodes, f)
		}
	}
	if err := d.start(ctx, d.server(), d.cfg.size(s.Conns), func(r *Redis) request { return d.hello(r, s) }); err != nil {
		return err
	}
	if len(d.env.Locks) > 1 && !d.pool.can(SupportsNodes) {
		d.Stop()
		return fmt.Errorf("adapter %s: the sale gave its lock %d servers, and it does not support nodes", d.cfg.Name, len(d.env.Locks))
	}
	return nil
}

// size is the pool's size for a sale of conns connections: Procs, or conns.
func (cfg Config) size(conns int) int {
	if cfg.Procs > 0 {
		return cfg.Procs
	}
	return max(conns, 1)
}

// start opens the front to server and starts a pool of size processes, saying hello to
// each.
func (d *design) start(ctx context.Context, server redis.UniversalClient, size int, hello func(*Redis) request) error {
	if d.env.Topology == nil || len(d.env.Topology.Cluster) == 0 {
		f, err := newFront(server)
		if err != nil {
			return err
		}
		d.front = f
	}
	p, err := newPool(ctx, d.cfg.Name, d.argv, cmp.Or(d.cfg.Patience, DefaultPatience), size, hello(d.where(server)), d.stepped)
	if err != nil {
		d.closeFront()
		return err
	}
	d.pool = p
	return nil
}

// probe starts one process, checks what it said to hello, and stops it.
func (d *design) probe(ctx context.Context, server redis.UniversalClient, hello func(*Redis) request) ([]string, error) {
	if err := d.start(ctx, server, 1, hello); err != nil {
		return nil, err
	}
	defer d.Stop()
	if _, err := d.documented(); err != nil {
		return nil, err
	}
	return d.pool.said.Supports, nil
}

func (d *design) closeFront() {
	if d.front != nil {
		d.front.close()
		d.front = nil
	}
	for _, f := range d.nodes {
		f.close()
	}
	d.nodes = nil
}

// documented is what the adapter documents (protocol 2), read as faults.ParseVerdicts
// reads a design file's: by fault, the classes of a lock's sales or a queue's.
func (d *design) documented() (faults.Verdicts, error) {
	said := d.pool.said
	a := faults.Locks
	if slices.Contains(said.Supports, SupportsQueue) {
		a = faults.Queues
	}
	v, err := faults.ParseVerdicts("documented", said.Documented, a)
	if err != nil {
		return v, fmt.Errorf("adapter %s: hello: %w", d.cfg.Name, err)
	}
	return v, nil
}

// Documented implements lockimpl.Documenter: what the adapter said it documents in its
// hello, once its pool started.
func (d *design) Documented() faults.Verdicts {
	if d.pool == nil {
		return faults.Verdicts{}
	}
	v, _ := d.documented() // Probe refused what does not read
	return v
}

// Stop implements lockimpl.Starter: the processes go, then the front they dialed.
func (d *design) Stop() string {
	if d.pool == nil {
		return ""
	}
	d.pool.stop()
	d.closeFront()
	return d.pool.stderr.String()
}

// call sends req on a process of the pool and gives it back.
func (d *design) call(ctx context.Context, req request) (reply, error) {
	pr, err := d.pool.get(ctx)
	if err != nil {
		return reply{}, err
	}
	r, err := d.ask(ctx, pr, req)
	d.pool.put(pr)
	return r, err
}

// ask sends req to pr; a failure of the process is the adapter's, a reply's error is
// the operation's.
func (d *design) ask(ctx context.Context, pr *proc, req request) (reply, error) {
	r, err := pr.call(ctx, req)
	switch {
	case err != nil && ctx.Err() != nil:
		return r, err
	case err != nil:
		return r, d.pool.broken(err)
	case r.Error != "":
		return r, fmt.Errorf("%s: %s: %s", d.cfg.Name, req.Op, r.Error)
	}
	return r, nil
}

type locker struct{ *design }

var (
	_ lockimpl.Terminator = (*lease)(nil)
	_ lockimpl.Starver    = (*lease)(nil)
	_ lockimpl.AppPauser  = (*lease)(nil)
	_ lockimpl.Starter    = (*locker)(nil)
	_ lockimpl.HalfLocker = (*locker)(nil)
)

// TryLock implements lockimpl.Locker: the process that grants a lease keeps it, and
// serves nobody else, until the lease is released.
func (l *locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	pr, err := l.pool.getSoon(ctx)
	if err != nil {
		return nil, err
	}
	r, err := l.ask(ctx, pr, request{Op: "try", Key: key, TTLms: ttl.Milliseconds()})
	if err != nil || !r.Granted {
		l.pool.put(pr)
		if err == nil {
			err = lockimpl.ErrNotAcquired
		}
		return nil, err
	}
	ls := &lease{l: l, pr: pr, id: r.Lease, ttl: ttl, token: r.Token}
	if l.pool.can(SupportsRenew) {
		ls.watch = lockimpl.KeepAlive(ls, ttl, func(ctx context.Context) (bool, error) {
			r, err := ls.l.ask(ctx, ls.pr, request{Op: "renew", Lease: ls.id, TTLms: ttl.Milliseconds()})
			return r.Renewed, err
		})
	}
	return ls.outer(), nil
}

// HalfLock implements lockimpl.HalfLocker for an adapter that supports half: the
// process takes the first command of its acquire, answers, and is killed, as a buyer
// that died between its two commands. An adapter without half takes the lock whole and
// is killed holding it, as a one-command design's buyer is.
func (l *locker) HalfLock(ctx context.Context, key string, ttl time.Duration) (bool, error) {
	if !l.pool.can(SupportsHalf) {
		lease, err := l.TryLock(ctx, key, ttl)
		if err != nil {
			return false, err
		}
		lease.(lockimpl.Freezer).Freeze(time.Time{})
		return true, nil
	}
	pr, err := l.pool.getSoon(ctx)
	if err != nil {
		return false, err
	}
	r, err := l.ask(ctx, pr, request{Op: "try", Key: key, TTLms: ttl.Milliseconds(), Half: true})
	if err != nil || !r.Granted {
		l.pool.put(pr)
		return false, err
	}
	return true, l.pool.replace(ctx, pr)
}

// lease is a lock an adapter's process granted, and the process, held until release.
type lease struct {
	l     *locker
	pr    *proc
	id    string
	ttl   time.Duration
	token *int64
	watch lockimpl.Lease // the renewing lease around this one, when the adapter renews

	mu     sync.Mutex
	dead   bool
	resume *time.Timer
	// terminated is set once the process was sent SIGTERM: it leaves the pool, whatever
	// it does next.
	terminated bool
}

// outer is the lease the sale holds: the renewing one when there is one.
func (ls *lease) outer() lockimpl.Lease {
	if ls.watch != nil {
		return renewing{ls.watch, ls}
	}
	if ls.token != nil {
		return fenced{ls}
	}
	return ls
}

// Release implements lockimpl.Lease, and gives the process back.
func (ls *lease) Release(ctx context.Context) error {
	ls.mu.Lock()
	dead := ls.dead
	ls.mu.Unlock()
	if dead {
		return lockimpl.ErrNotHeld
	}
	if ls.terminating() {
		select {
		case <-ls.pr.done:
			return lockimpl.ErrNotHeld // gone with its lock
		default: // it finishes its request, the release included
		}
		r, err := ls.l.ask(ctx, ls.pr, request{Op: "release", Lease: ls.id})
		if err != nil || !r.Released {
			return lockimpl.ErrNotHeld
		}
		return nil
	}
	r, err := ls.l.ask(ctx, ls.pr, request{Op: "release", Lease: ls.id})
	ls.l.pool.put(ls.pr)
	switch {
	case err != nil:
		return err
	case !r.Released:
		return lockimpl.ErrNotHeld
	}
	return nil
}

// Freeze implements lockimpl.Freezer on the process itself: SIGSTOP until until, or
// SIGKILL for the zero time, with a fresh process in its place.
func (ls *lease) Freeze(until time.Time) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if until.IsZero() {
		ls.dead = true
		if ls.resume != nil {
			ls.resume.Stop()
		}
		ls.l.pool.replace(context.Background(), ls.pr)
		return
	}
	ls.pr.pause()
	ls.resume = time.AfterFunc(time.Until(until), ls.pr.resume)
}

// Terminate implements lockimpl.Terminator on the process itself: SIGTERM to its group,
// SIGKILL once grace has passed if it is still there; a fresh process then takes its
// place in the pool. The returned channel closes once it is gone.
func (ls *lease) Terminate(grace time.Duration) <-chan struct{} {
	ls.mu.Lock()
	ls.terminated = true
	ls.mu.Unlock()
	return ls.l.pool.terminate(ls.pr, grace)
}

func (ls *lease) terminating() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.terminated
}

// Starve implements lockimpl.Starver on the process itself: it runs a share of the time
// until until (proc.starve).
func (ls *lease) Starve(until time.Time, run, period time.Duration) {
	go ls.pr.starve(until, run, period)
}

// PauseApp implements lockimpl.AppPauser: every process of the pool, which is the
// application instance's (each instance has a design, and a pool, of its own), is
// stopped until until (pool.pauseAll).
func (ls *lease) PauseApp(until time.Time) int { return ls.l.pool.pauseAll(until) }

// renewing is the renewing lease, frozen and starved as the process is.
type renewing struct {
	lockimpl.Lease
	inner *lease
}

func (r renewing) Freeze(until time.Time) {
	r.Lease.(lockimpl.Freezer).Freeze(until)
	r.inner.Freeze(until)
}

func (r renewing) Terminate(grace time.Duration) <-chan struct{} {
	gone := r.inner.Terminate(grace)
	go func() {
		<-gone
		r.Lease.(lockimpl.Freezer).Freeze(time.Time{}) // no renewals through a process that is gone
	}()
	return gone
}

func (r renewing) Starve(until time.Time, run, period time.Duration) {
	r.Lease.(lockimpl.Starver).Starve(until, run, period)
	r.inner.Starve(until, run, period)
}

func (r renewing) PauseApp(until time.Time) int { return r.inner.PauseApp(until) }

func (r renewing) Renewals() (int, int) { return r.Lease.(lockimpl.Renewer).Renewals() }

func (r renewing) PromisedUntil() time.Time { return r.Lease.(lockimpl.Extender).PromisedUntil() }

// StillHeld implements lockimpl.Teller: the adapter asks its library (held), where its
// hello said it can.
func (ls *lease) StillHeld(ctx context.Context) (bool, error) {
	if !ls.l.pool.can(SupportsHeld) {
		return false, lockimpl.ErrCannotTell
	}
	r, err := ls.l.ask(ctx, ls.pr, request{Op: "held", Lease: ls.id})
	return r.Held, err
}

func (r renewing) StillHeld(ctx context.Context) (bool, error) { return r.inner.StillHeld(ctx) }

// fenced is a lease that came with a fencing token.
type fenced struct{ *lease }

func (f fenced) Token() int64 { return *f.token }

type purchaser struct{ *design }

var _ lockimpl.Starter = (*purchaser)(nil)

// Purchase implements lockimpl.Purchaser with buy: the purchase is the adapter's own.
func (p *purchaser) Purchase(ctx context.Context, _ lockimpl.Stock, buyer string, _ time.Duration) (int64, error) {
	r, err := p.call(ctx, request{Op: "buy", Buyer: buyer})
	switch {
	case err != nil:
		return 0, err
	case r.Sold:
		return r.Left, nil
	case r.Reason == "gave-up":
		return 0, lockimpl.ErrNotAcquired
	}
	return 0, lockimpl.ErrSoldOut
}
