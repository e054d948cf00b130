package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/stockbench/stockbench/bench"
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
	var s results.Sale
	switch j := j.(type) {
	case bench.LockJob:
		s = j.Sale.Value(j.Impl.Name)
	case bench.QueueJob:
		s = j.Sale.Value(j.Impl.Name)
	default:
		return nil
	}
	s.Source = c.designs.Source(s.Design)
	s.Redis = c.redisArgs()
	return &s
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
