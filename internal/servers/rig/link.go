package rig

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/stockbench/stockbench/internal/servers"
)

// link is a toxiproxy proxy, in this process, between buyers and one server.
type link struct {
	p *toxiproxy.Proxy
}

// proxy puts a link in front of every server buyers reach.
func (r *Rig) proxy() error {
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	for _, t := range append([]*servers.Target{r.Stock}, r.Locks...) {
		if _, ok := r.links[t]; ok {
			continue
		}
		p := toxiproxy.NewProxy(srv, fmt.Sprintf("redis-%d", len(r.links)), "127.0.0.1:0", t.Addr())
		if err := p.Start(); err != nil {
			return fmt.Errorf("toxiproxy: %w", err)
		}
		r.links[t] = &link{p}
	}
	return nil
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
