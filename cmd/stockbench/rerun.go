package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// sale is job j as a value: its preset, its design and where that came from, its fault
// plan, every size, the seed, and where Redis came from. Every setting is spelled out,
// the preset's too, so that the record says what the sale was and a shrink or the
// explorer can change one setting of it. What only a preset sets (a retry's jitter, a
// fault's rates) comes back with its scenario. Nil for a shard's sale: one command does
// not rerun a sharded sale.
func (c *common) sale(j bench.Job) *results.Sale {
	if c.shard.Sharded() {
		return nil
	}
	var s *results.Sale
	switch j := j.(type) {
	case bench.LockJob:
		fs := j.Sale.WithDefaults()
		s = &results.Sale{Kind: results.LockSale, Scenario: fs.Name, Design: j.Impl.Name, Faults: fs.Faults.String()}
		spell(s, fs.Sale)
		s.Set("critical", string(fs.Critical))
		s.Set("think", fs.Think.String())
		s.Set("ttl", fs.TTL.String())
		s.Set("retry-interval", fs.Retry.Interval.String())
		s.Set("timeout", fs.Retry.Limit().String())
		if fs.Apps > 0 {
			s.Set("apps", strconv.Itoa(fs.Apps))
		}
		if fs.Serve > 0 {
			s.Set("serve", strconv.Itoa(fs.Serve))
		}
		if fs.CheckLinearizable {
			s.Set("check-linearizable", "true")
		}
		if fs.Drop.On() {
			s.Set("waves", strconv.Itoa(fs.Drop.Waves))
			s.Set("wave-every", fs.Drop.Every.String())
		}
	case bench.QueueJob:
		qs := j.Sale.WithDefaults()
		s = &results.Sale{Kind: results.QueueSale, Scenario: qs.Name, Design: j.Impl.Name, Faults: qs.Faults.String()}
		s.Set("fulfil", string(qs.Fulfil))
		spell(s, qs.Sale)
		s.Set("workers", strconv.Itoa(qs.Workers))
		s.Set("visibility", qs.Visibility.String())
		s.Set("work", qs.Work.String())
	default:
		return nil
	}
	s.Source = c.designs.source(s.Design)
	s.Redis = c.redisArgs()
	return s
}

// spell spells out the settings every kind of sale has.
func spell(s *results.Sale, sale scenarios.Sale) {
	s.Set("buyers", strconv.Itoa(sale.Buyers))
	s.Set("stock", strconv.FormatInt(sale.Stock, 10))
	s.Set("conns", strconv.Itoa(sale.Conns))
	s.Set("seed", strconv.FormatUint(sale.Seed, 10))
	if sale.Rate > 0 {
		s.Set("rate", strconv.FormatFloat(sale.Rate, 'g', -1, 64))
	}
	if sale.RampTo > 0 {
		s.Set("ramp-to", strconv.FormatFloat(sale.RampTo, 'g', -1, 64))
	}
	if sale.Warmup > 0 {
		s.Set("warmup", sale.Warmup.String())
	}
}

// redisArgs says where Redis came from, when the command was told: a password in a URL
// is masked, never written.
func (c *common) redisArgs() []string {
	var args []string
	switch {
	case c.redis.URL != "":
		args = append(args, "--redis-url", redact.String(c.redis.URL))
		if c.redis.Cluster {
			args = append(args, "--redis-cluster")
		}
	case c.redis.Mode != "" && c.redis.Mode != servers.ModeAuto:
		args = append(args, "--redis", string(c.redis.Mode))
	}
	return args
}

// source is where the design named name comes from: nil for a built-in design.
func (c *catalogue) source(name string) *results.DesignSource {
	for _, d := range c.files {
		if d.Name() == name {
			return &results.DesignSource{File: d.Path}
		}
	}
	for _, e := range c.execs {
		if e.cfg.Name == name {
			src := &results.DesignSource{Exec: e.cfg.Command, Part: e.part, Procs: c.procs}
			if c.nodes > 1 && e.part == adapter.SupportsLock {
				src.Nodes = c.nodes
			}
			return src
		}
	}
	return nil
}

// jobOf is the job sale s describes, read back as its command line would be; an error is
// a setting the sale's checks refuse (a shrink or a draw went past what they take).
func jobOf(s *results.Sale) (bench.Job, error) {
	_, jobs, _, err := runJobs(s.Args()[1:], io.Discard)
	if err != nil {
		return nil, err
	}
	return jobs[0], nil
}

// saleOf is run r's sale as a value: its record's, or for a record older than the
// value, read back from the command line it kept.
func saleOf(r *results.Run) (*results.Sale, error) {
	if r.Sale != nil {
		return r.Sale, nil
	}
	if len(r.Rerun) == 0 {
		return nil, errors.New("no recorded command (a shard's sale, or a record older than replay)")
	}
	c, jobs, _, err := runJobs(r.Rerun[1:], io.Discard)
	if err != nil {
		return nil, fmt.Errorf("its command %q: %w", bench.ShellLine(r.Rerun), err)
	}
	return c.sale(jobs[0]), nil
}
