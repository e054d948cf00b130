// Package rig starts the Redis servers one sale needs, beside a shared one, and wires the
// sale's clients and faults to them.
package rig

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// Rig is the servers of one sale: the stock store, the lock servers and a standby, each
// either the shared server or one from the pool.
type Rig struct {
	Stock   *servers.Target
	Locks   []*servers.Target
	Replica *servers.Target

	pool    *Pool
	faulted []*servers.Target // what the faults act on: reset, or stopped if dead, by Close
	once    *servers.Target   // a server started for this sale alone (in a persistence mode), stopped by Close
	spare   []*servers.Target // the other servers taken from the pool
	links   map[*servers.Target]*link
	toxi    *toxiproxy.ApiServer
	named   int // links started, for their names
	// perApp: each application instance reaches the lock servers through links of its
	// own (appLinks, from instance 1; extra holds them for Close).
	perApp   bool
	mu       sync.Mutex
	appLinks map[int][]faults.Link
	extra    []*link
	clients  []redis.UniversalClient
	apart    bool // the shared server's part is played by one of the pool's
	replica  bool // the design needs its lock server replicated
	// topo, when set, is the whole of the sale's Redis (a Sentinel group, a cluster):
	// stock and locks on it, and what its faults act on in topoFaults.
	topo       topology
	topoFaults faults.Servers
}

// topology is a Sentinel group or a cluster: buyers and the harness reach it through
// clients of their own, which follow it when it moves.
type topology interface {
	Client(conns int) redis.UniversalClient
	Admin() redis.UniversalClient
	Close(context.Context) error
}

// Option changes how Start assembles a rig.
type Option func(*Rig)

// Apart gives the sale a server from the pool where it would use the shared one, so that
// what the servers count (INFO commandstats and cpu) is its own while other sales run
// beside it. A pool that cannot start servers (the user's own Redis) leaves it shared.
func Apart() Option { return func(r *Rig) { r.apart = r.pool.more != nil } }

// Replicated gives the sale a lock server of its own with a replica, for a design that
// waits for one (lockimpl.Impl.Replicas); the stock shares the lock server.
func Replicated() Option { return func(r *Rig) { r.replica = true } }

// Start assembles the servers for a sale with nodes lock servers under plan: shared where
// it can, from pool where it must.
func Start(ctx context.Context, shared *servers.Target, pool *Pool, nodes int, plan faults.Plan, opts ...Option) (*Rig, error) {
	r := &Rig{pool: pool, links: make(map[*servers.Target]*link), appLinks: make(map[int][]faults.Link)}
	for _, o := range opts {
		o(r)
	}
	needs := plan.Needs()
	r.perApp = needs.PerApp && needs.Proxy
	if r.replica && !needs.Sentinel && !needs.Cluster { // their masters have their replicas
		needs.Replica, needs.Owned = true, true
	}
	var err error
	switch {
	case (needs.Sentinel || needs.Cluster) && (nodes > 1 || (needs != faults.Needs{Sentinel: true} && needs != faults.Needs{Cluster: true} &&
		needs != faults.Needs{Cluster: true, LateReplicas: true})):
		err = fmt.Errorf("a Sentinel group or a cluster is the sale's whole Redis: it takes no other server fault, nor a design of %d servers", nodes)
	case needs.Sentinel:
		var s *servers.Sentinel
		if s, err = pool.sentinel(ctx); err == nil {
			r.topo, r.topoFaults = s, faults.Servers{Sentinel: s}
			err = r.ledgerApart(ctx, shared)
		}
	case needs.Cluster:
		var c *servers.Cluster
		if c, err = pool.cluster(ctx, servers.ClusterOptions{LateReplicas: needs.LateReplicas}); err == nil {
			r.topo, r.topoFaults = c, faults.Servers{Cluster: c}
		}
	default:
		err = r.assemble(ctx, shared, max(nodes, 1), needs)
	}
	if err == nil && needs.Proxy {
		err = r.proxy()
	}
	if err != nil {
		return nil, errors.Join(err, r.Close(context.WithoutCancel(ctx)))
	}
	return r, nil
}

// ledgerApart keeps the stock, and the records a sale keeps beside it, off a Sentinel
// group: on the shared server (or one of the pool's, Apart). The lock or the queue lives
// on the group and the ledger does not, so that what a failover loses or doubles is the
// design's, never the harness's records of it.
func (r *Rig) ledgerApart(ctx context.Context, shared *servers.Target) (err error) {
	r.Stock, err = r.sharedOrOwn(ctx, shared)
	return err
}

// sharedOrOwn is the server that plays the shared one's part: shared, or with Apart one
// of the pool's, given back at Close.
func (r *Rig) sharedOrOwn(ctx context.Context, shared *servers.Target) (*servers.Target, error) {
	if !r.apart {
		return shared, nil
	}
	own, err := r.pool.get(ctx, 1, "a server of the sale's own")
	if err != nil {
		return nil, err
	}
	r.spare = append(r.spare, own...)
	return own[0], nil
}

func (r *Rig) assemble(ctx context.Context, shared *servers.Target, nodes int, needs faults.Needs) error {
	// Faults act on the first lock server (and the replica): those come fresh and go when
	// the sale ends. The other lock servers are only ever used, and can be reused.
	faulted := 0
	if needs.SeparateStock || needs.Owned {
		faulted = 1
	}
	if needs.Replica {
		faulted++
	}
	var spent []*servers.Target
	if args := needs.ServerArgs(); len(args) > 0 || needs.Clock {
		// A server that keeps data on disk keeps it past the sale, one whose clock a
		// fault moved keeps that, and one started to take DEBUG takes it: none is pooled.
		what := fmt.Sprintf("a lock server with persistence %s", needs.Persist)
		switch {
		case needs.Clock:
			what = "a lock server with a movable clock"
		case needs.Debug:
			what = "a lock server that takes DEBUG"
		}
		t, err := r.pool.fresh(ctx, args, needs.Clock, what)
		if err != nil {
			return err
		}
		r.once, spent, faulted = t, []*servers.Target{t}, faulted-1
	}
	extra := nodes - 1 // lock servers beyond the first
	if needs.AllLocks {
		faulted += extra // a fault restarts them all: every one comes fresh, as the first
	}
	more, err := r.pool.get(ctx, faulted, "servers for the faults")
	if err != nil {
		return err
	}
	r.faulted, spent = more, append(spent, more...)
	var spare []*servers.Target
	if needs.AllLocks {
		spare = spent[1 : 1+extra]
	} else if spare, err = r.pool.get(ctx, extra, fmt.Sprintf("%d more lock servers", extra)); err != nil {
		return err
	} else {
		r.spare = spare
	}
	if shared, err = r.sharedOrOwn(ctx, shared); err != nil {
		return err
	}

	r.Stock = shared
	switch {
	case needs.SeparateStock:
		r.Locks = []*servers.Target{spent[0]} // the stock stays out of the fault's way
	case needs.Owned:
		r.Stock = spent[0] // the fault reconfigures the one server: the sale gets its own
		r.Locks = []*servers.Target{spent[0]}
	default:
		r.Locks = []*servers.Target{shared}
	}
	r.Locks = append(r.Locks, spare...)
	if needs.Replica {
		r.Replica = spent[len(spent)-1]
		return r.Replica.ReplicaOf(ctx, r.Locks[0])
	}
	return nil
}

// Clients returns the sale's view of the rig: buyer clients of conns connections each,
// admin clients, and the servers its faults act on; Close closes them.
func (r *Rig) Clients(conns int) scenarios.Redis {
	if r.topo != nil {
		buyers, admin := r.topo.Client(conns), r.topo.Admin()
		r.clients = append(r.clients, buyers, admin)
		srv := r.topoFaults
		srv.Admin = admin
		red := scenarios.Redis{Stock: buyers, Locks: []redis.UniversalClient{buyers}, StockAdmin: admin,
			LockAdmins: []redis.UniversalClient{admin}, Servers: srv, Topology: r.where()}
		if r.Stock != nil {
			red.Stock, red.StockAdmin = r.client(r.Stock, conns), r.Stock.Client(4)
			r.clients = append(r.clients, red.Stock, red.StockAdmin)
		}
		return red
	}
	var red scenarios.Redis
	buyers := make(map[*servers.Target]redis.UniversalClient)
	admins := make(map[*servers.Target]redis.UniversalClient)
	// One client per server and role: a server that is both stock store and lock server
	// is one server, to the sale and to its command counts.
	get := func(m map[*servers.Target]redis.UniversalClient, t *servers.Target, mk func() redis.UniversalClient) redis.UniversalClient {
		if c, ok := m[t]; ok {
			return c
		}
		c := mk()
		r.clients = append(r.clients, c)
		m[t] = c
		return c
	}
	red.Stock = get(buyers, r.Stock, func() redis.UniversalClient { return r.client(r.Stock, conns) })
	red.StockAdmin = get(admins, r.Stock, func() redis.UniversalClient { return r.Stock.Client(4) })
	for _, l := range r.Locks {
		red.Locks = append(red.Locks, get(buyers, l, func() redis.UniversalClient { return r.client(l, conns) }))
		red.LockAdmins = append(red.LockAdmins, get(admins, l, func() redis.UniversalClient { return l.Client(4) }))
	}
	red.Servers = r.servers(red.LockAdmins[0])
	if r.perApp {
		red.AppLocks = func(app int) ([]redis.UniversalClient, error) { return r.appLocks(app, conns) }
		red.Servers.AppLinks = r.paths
	}
	return red
}

// where is how a design's own client reaches the sale's Sentinel group or cluster.
func (r *Rig) where() *lockimpl.Topology {
	switch t := r.topo.(type) {
	case *servers.Sentinel:
		return &lockimpl.Topology{Sentinels: t.Sentinels(), Master: servers.SentinelMaster}
	case *servers.Cluster:
		return &lockimpl.Topology{Cluster: t.Seeds()}
	}
	return nil
}

// client is a buyer client of t: through its proxy when there is one.
func (r *Rig) client(t *servers.Target, conns int) redis.UniversalClient {
	if l, ok := r.links[t]; ok {
		return t.ClientVia(conns, l.Listen())
	}
	return t.Client(conns)
}

// servers is what the faults act on; nil servers for those the harness did not start.
func (r *Rig) servers(admin redis.UniversalClient) faults.Servers {
	s := faults.Servers{Admin: admin}
	if r.Locks[0].Info.Owned {
		s.Lock = r.Locks[0]
	}
	for _, l := range r.Locks {
		if !l.Info.Owned {
			s.Locks = nil
			break
		}
		s.Locks = append(s.Locks, l)
	}
	if r.Replica != nil {
		s.Replica = r.Replica
	}
	if l, ok := r.links[r.Locks[0]]; ok {
		s.LockLink = l
	}
	for _, l := range r.links {
		s.Links = append(s.Links, l)
	}
	return s
}

// Close closes the clients and proxies, stops the servers a fault killed and gives the
// others back to the pool, their settings reset; the shared server stays.
func (r *Rig) Close(ctx context.Context) error {
	for _, c := range r.clients {
		c.Close()
	}
	for _, l := range r.links {
		l.close()
	}
	for _, l := range r.extra {
		l.close()
	}
	if r.topo != nil {
		err := r.topo.Close(ctx)
		r.pool.put(r.spare...) // the ledger's server, under a Sentinel group
		return err
	}
	errs := make([]error, len(r.faulted))
	var wg sync.WaitGroup
	for i, t := range r.faulted {
		wg.Go(func() {
			if t.Dead() {
				errs[i] = t.Close(ctx)
			} else if errs[i] = reset(ctx, t); errs[i] == nil {
				r.pool.put(t)
			} else {
				t.Close(ctx)
			}
		})
	}
	wg.Wait()
	if r.once != nil {
		errs = append(errs, r.once.Close(ctx))
	}
	r.pool.put(r.spare...)
	return errors.Join(errs...)
}

// reset undoes what a fault may have set on a server that lived through it.
func reset(ctx context.Context, t *servers.Target) error {
	c := t.Client(1)
	defer c.Close()
	for _, kv := range [][2]string{{"maxmemory", "0"}, {"maxmemory-policy", "noeviction"}} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return fmt.Errorf("reset %s: %w", t.Addr(), err)
		}
	}
	return c.FlushAll(ctx).Err() // a server of the harness's own, used by no one else
}
