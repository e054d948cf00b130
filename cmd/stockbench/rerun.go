package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/replay"
	"github.com/stockbench/stockbench/internal/redact"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/results"
)

// sale is job j as a value (scenarios.FlashSale.Value): with where its design comes
// from and where Redis came from. Nil for a shard's sale: one command does not rerun a
// sharded sale.
func (c *common) sale(j bench.Job) *results.Sale {
	if c.shard.Sharded() {
		return nil
	}
	s := bench.SaleOf(&c.designs, j)
	if s == nil {
		return nil
	}
	s.Redis = c.redisArgs()
	return s
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

// saleOf is run r's sale as a value: its record's, or for a record older than the
// value, read back from the command line it kept.
func saleOf(r *results.Run) (*results.Sale, error) {
	if r.Sale != nil {
		return replay.Recorded(r)
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
