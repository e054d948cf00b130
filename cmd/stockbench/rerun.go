package main

import (
	"strconv"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/designs/adapter"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/scenarios"
)

// rerun is the command line, after "stockbench", that runs job j again alone as it ran:
// its preset, its design and where that came from, its fault plan, every size, the seed,
// and where Redis came from. Every setting is spelled out, the preset's too, so that
// the line says what the sale was and a shrink can change one setting of it. What only
// a preset sets (a retry's jitter, a fault's rates) comes back with --scenario. Nil for
// a shard's sale: one command does not rerun a sharded sale.
func (c *common) rerun(j bench.Job) []string {
	if c.shard.Sharded() {
		return nil
	}
	var args []string
	switch j := j.(type) {
	case bench.LockJob:
		s := j.Sale.WithDefaults()
		args = []string{"run", "--scenario", s.Name, "--lock", j.Impl.Name}
		args = append(args, c.designs.source(j.Impl.Name)...)
		args = append(args, "--fault", s.Faults.String())
		args = append(args, saleArgs(s.Sale)...)
		args = append(args, "--critical", string(s.Critical), "--think", s.Think.String(), "--ttl", s.TTL.String(),
			"--retry-interval", s.Retry.Interval.String(), "--timeout", s.Retry.Limit().String())
		if s.Apps > 0 {
			args = append(args, "--apps", strconv.Itoa(s.Apps))
		}
		if s.Serve > 0 {
			args = append(args, "--serve", strconv.Itoa(s.Serve))
		}
		if s.CheckLinearizable {
			args = append(args, "--check-linearizable")
		}
		if s.Drop.On() {
			args = append(args, "--waves", strconv.Itoa(s.Drop.Waves), "--wave-every", s.Drop.Every.String())
		}
	case bench.QueueJob:
		s := j.Sale.WithDefaults()
		args = []string{"run", "--scenario", s.Name, "--queue", j.Impl.Name}
		args = append(args, c.designs.source(j.Impl.Name)...)
		args = append(args, "--fulfil", string(s.Fulfil), "--fault", s.Faults.String())
		args = append(args, saleArgs(s.Sale)...)
		args = append(args, "--workers", strconv.Itoa(s.Workers), "--visibility", s.Visibility.String(), "--work", s.Work.String())
	default:
		return nil
	}
	return append(args, c.redisArgs()...)
}

// saleArgs spells out the settings every kind of sale has.
func saleArgs(s scenarios.Sale) []string {
	args := []string{"--buyers", strconv.Itoa(s.Buyers), "--stock", strconv.FormatInt(s.Stock, 10),
		"--conns", strconv.Itoa(s.Conns), "--seed", strconv.FormatUint(s.Seed, 10)}
	if s.Rate > 0 {
		args = append(args, "--rate", strconv.FormatFloat(s.Rate, 'g', -1, 64))
	}
	if s.RampTo > 0 {
		args = append(args, "--ramp-to", strconv.FormatFloat(s.RampTo, 'g', -1, 64))
	}
	if s.Warmup > 0 {
		args = append(args, "--warmup", s.Warmup.String())
	}
	return args
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

// source is the flags that bring the design named name into a command: none for a
// built-in design.
func (c *catalogue) source(name string) []string {
	for _, d := range c.files {
		if d.Name() == name {
			if d.Lock != nil {
				return []string{"--lock-file", d.Path}
			}
			return []string{"--queue-file", d.Path}
		}
	}
	for _, e := range c.execs {
		if e.cfg.Name == name {
			args := []string{execFlags[e.part], e.cfg.Name + "=" + e.cfg.Command}
			if c.procs > 0 {
				args = append(args, "--adapter-procs", strconv.Itoa(c.procs))
			}
			if c.nodes > 1 && e.part == adapter.SupportsLock {
				args = append(args, "--adapter-nodes", strconv.Itoa(c.nodes))
			}
			return args
		}
	}
	return nil
}
