package rig

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers"
)

// link is a toxiproxy proxy, in this process, between buyers and one server.
type link struct {
	p *toxiproxy.Proxy
}

// proxy puts a link in front of every server buyers reach.
func (r *Rig) proxy() error {
	r.toxi = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for _, t := range append([]*servers.Target{r.Stock}, r.Locks...) {
		if _, ok := r.links[t]; ok {
			continue
		}
		l, err := r.newLink(t)
		if err != nil {
			return err
		}
		r.links[t] = l
	}
	return nil
}

// newLink starts a link to t.
func (r *Rig) newLink(t *servers.Target) (*link, error) {
	r.named++
	p := toxiproxy.NewProxy(r.toxi, fmt.Sprintf("redis-%d", r.named), "127.0.0.1:0", t.Addr())
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("toxiproxy: %w", err)
	}
	return &link{p}, nil
}

// appLocks opens application instance app's (from 1) clients of the lock servers, of
// conns connections each, every one through a link of its own, for a fault that cuts
// one instance off (faults.Needs.PerApp). Instance 0 has the sale's own.
func (r *Rig) appLocks(app, conns int) ([]redis.UniversalClient, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.appLinks[app]; ok || app < 1 {
		return nil, fmt.Errorf("rig: app %d's lock clients were opened already, or are the sale's own", app+1)
	}
	var cs []redis.UniversalClient
	var ls []faults.Link
	for _, t := range r.Locks {
		l, err := r.newLink(t)
		if err != nil {
			return nil, err
		}
		r.extra = append(r.extra, l)
		c := t.ClientVia(conns, l.Listen())
		r.clients = append(r.clients, c)
		cs, ls = append(cs, c), append(ls, l)
	}
	r.appLinks[app] = ls
	return cs, nil
}

// paths is each application instance's links to the lock servers, in Locks' order,
// instance 0's (the sale's own) first.
func (r *Rig) paths() [][]faults.Link {
	var own []faults.Link
	for _, t := range r.Locks {
		if l, ok := r.links[t]; ok {
			own = append(own, l)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	all := [][]faults.Link{own}
	for app := 1; ; app++ {
		ls, ok := r.appLinks[app]
		if !ok {
			return all
		}
		all = append(all, ls)
	}
}

// Listen is the address buyers dial.
func (l *link) Listen() string { return l.p.Listen }

// AddToxic adds a toxic to the responses coming back from the server.
func (l *link) AddToxic(name, kind string, attrs map[string]any) error {
	body, err := json.Marshal(map[string]any{"name": name, "type": kind, "stream": "downstream", "attributes": attrs})
	if err != nil {
		return err
	}
	if _, err := l.p.Toxics.AddToxicJson(strings.NewReader(string(body))); err != nil {
		return fmt.Errorf("toxiproxy: add %s: %w", kind, err)
	}
	return nil
}

// RemoveToxic removes the toxic named name.
func (l *link) RemoveToxic(name string) error {
	if err := l.p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		return fmt.Errorf("toxiproxy: remove %s: %w", name, err)
	}
	return nil
}

func (l *link) close() { l.p.Stop() }
