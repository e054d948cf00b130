package rig

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/stockbench/stockbench/internal/servers"
)

// Pool starts the servers sales need beyond the shared one, and keeps those that no fault
// touched for the next sale: a matrix then starts Redlock's extra servers once, not once
// per sale.
type Pool struct {
	more servers.Provider // nil: no server may be started (the user's own Redis)
	net  *servers.Network // the containers' private network, if they are containers
	mu   sync.Mutex
	idle []*servers.Target
}

// NewPool returns a pool that starts servers of the kind shared is, as cfg describes
// them; containers join a private network of their own, which Close removes.
func NewPool(ctx context.Context, shared *servers.Target, cfg servers.Config) (*Pool, error) {
	p := &Pool{}
	name := ""
	if shared.Info.Kind == servers.KindContainer {
		n, err := servers.NewNetwork(ctx)
		if err != nil {
			return nil, err
		}
		p.net, name = n, n.Name()
	}
	p.more = cfg.More(shared.Info.Kind, name)
	return p, nil
}

// get returns n servers, idle ones first, starting the rest at once.
func (p *Pool) get(ctx context.Context, n int, what string) ([]*servers.Target, error) {
	if n == 0 {
		return nil, nil
	}
	if p.more == nil {
		return nil, fmt.Errorf("%s: the harness must start servers itself for this, not use an external one", what)
	}
	p.mu.Lock()
	k := min(n, len(p.idle))
	got := append([]*servers.Target(nil), p.idle[len(p.idle)-k:]...)
	p.idle = p.idle[:len(p.idle)-k]
	p.mu.Unlock()

	fresh := make([]*servers.Target, n-k)
	errs := make([]error, n-k)
	var wg sync.WaitGroup
	for i := range fresh {
		wg.Go(func() { fresh[i], errs[i] = p.more.Start(ctx) })
	}
	wg.Wait()
	for _, t := range fresh {
		if t != nil {
			got = append(got, t)
		}
	}
	if err := errors.Join(errs...); err != nil {
		p.put(got...)
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return got, nil
}

// fresh starts one server with args after the usual ones, and with a movable clock when
// clock is set, for one sale only: it does not go back to the pool.
func (p *Pool) fresh(ctx context.Context, args []string, clock bool, what string) (*servers.Target, error) {
	if p.more == nil {
		return nil, fmt.Errorf("%s: the harness must start servers itself for this, not use an external one", what)
	}
	provider := servers.WithArgs(p.more, args...)
	if clock {
		provider = servers.WithClock(provider)
	}
	t, err := provider.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return t, nil
}

// sentinel starts a Sentinel group of the pool's containers, for one sale.
func (p *Pool) sentinel(ctx context.Context) (*servers.Sentinel, error) {
	c, ok := p.more.(servers.Container)
	if !ok {
		return nil, errNoTopology("a Sentinel group")
	}
	return servers.StartSentinel(ctx, cmp.Or(c.Image, servers.DefaultImage))
}

// Topologies says why the pool cannot start a Sentinel group or a cluster for a sale,
// nil when it can: they are containers.
func (p *Pool) Topologies() error {
	if _, ok := p.more.(servers.Container); !ok {
		return errNoTopology("a Sentinel group or a Redis Cluster")
	}
	return nil
}

func errNoTopology(what string) error {
	return fmt.Errorf("%s is containers on a network of their own: it needs a Docker engine (--redis container)", what)
}

// cluster starts a Redis Cluster of the pool's containers, for one sale.
func (p *Pool) cluster(ctx context.Context, o servers.ClusterOptions) (*servers.Cluster, error) {
	c, ok := p.more.(servers.Container)
	if !ok {
		return nil, fmt.Errorf("a Redis Cluster here is containers on a network of their own: it needs a Docker engine (--redis container)")
	}
	return servers.StartCluster(ctx, cmp.Or(c.Image, servers.DefaultImage), o)
}

// put keeps servers for later sales.
func (p *Pool) put(ts ...*servers.Target) {
	p.mu.Lock()
	p.idle = append(p.idle, ts...)
	p.mu.Unlock()
}

// Close stops every idle server.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	errs := make([]error, len(idle))
	var wg sync.WaitGroup
	for i, t := range idle {
		wg.Go(func() { errs[i] = t.Close(ctx) })
	}
	wg.Wait()
	if p.net != nil {
		errs = append(errs, p.net.Remove(ctx))
	}
	return errors.Join(errs...)
}
