//go:build long

package adapter

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// Under a Sentinel group and a cluster an adapter's own client follows the topology
// (hello names the sentinels and the master, or the seeds): redis-py's Sentinel and
// RedisCluster clients finish each sale with a verdict and no adapter failure.
func TestAdapterOnTopologies(t *testing.T) {
	need(t, "Debian's Python with redis-py (python3-redis)", python...)
	impl := Lock(Config{Name: "redis-py", Command: "/usr/bin/python3 ../../../adapters/python/redis_py_lock.py", Procs: testProcs}, false)
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []faults.Kind{faults.SentinelKill, faults.ClusterMigrate} {
		t.Run(string(k), func(t *testing.T) {
			t.Parallel()
			s := sale
			s.Faults, s.Prefix = faults.Plan{{Kind: k}}, fmt.Sprintf("{adapter:topology:%s}", k)
			run := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: s.Faults, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, impl)
			})
			if !run.Complete || run.Verdict.Class == oracle.ClassUnknown || run.Oracle.Bought == 0 {
				t.Errorf("want a whole sale with a verdict, got complete %v, %s, %d sold (%s)", run.Complete, run.Verdict.Cell(), run.Oracle.Bought, run.FirstError)
			}
		})
	}
}

// A queue sale over a Sentinel group: the queue lives on the group and the stock, with
// the sale's records, on a server of its own (the shared one, no replica), so that what
// the failover loses is the queue's; the built-in reliable-list and RQ's own worker loop,
// following the group through redis-py's Sentinel (the adapter says it supports
// sentinel), each finish the sale with a verdict, the master killed mid-sale.
func TestQueuesOverSentinel(t *testing.T) {
	need(t, "Debian's Python with redis-py and RQ (python3-redis, python3-rq)", python...)
	h := rigtest.Harness(t)
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	builtin, err := queueimpl.Lookup("reliable-list")
	if err != nil {
		t.Fatal(err)
	}
	rq := Queue(Config{Name: "rq", Command: "/usr/bin/python3 ../../../adapters/python/rq_queue.py --worker-loop", Procs: testProcs})
	for _, impl := range []queueimpl.Impl{builtin, rq} {
		t.Run(impl.Name, func(t *testing.T) {
			s := sale
			s.Faults, s.Prefix, s.Visibility = faults.Plan{{Kind: faults.SentinelKill}}, "{adapter:sentinel:"+impl.Name+"}", 3*time.Second
			run := rigtest.On(t, h, rig.ForQueue(s.Faults, s.WithDefaults().Conns), func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				for _, c := range []struct {
					what   string
					client redis.UniversalClient
					want   string
				}{{"the stock's server", red.StockAdmin, "connected_slaves:0"}, {"the queue's master", red.LockAdmins[0], "connected_slaves:1"}} {
					info, err := c.client.Info(ctx, "replication").Result()
					if err != nil || !strings.Contains(info, c.want) {
						t.Errorf("%s: want %s, got %q (%v)", c.what, c.want, info, err)
					}
				}
				return s.Run(ctx, red, impl)
			})
			if !run.Complete || run.Verdict.Class == oracle.ClassUnknown || run.Queue.Fulfilled == 0 {
				t.Errorf("want a whole sale with a verdict, got complete %v, %s, %d fulfilled (%s)", run.Complete, run.Verdict.Cell(), run.Queue.Fulfilled, run.Error)
			}
			if len(run.Events) < 2 || !strings.Contains(run.Events[len(run.Events)-1].Detail, "promoted its replica") {
				t.Errorf("want the master killed and its replica promoted, got %+v", run.Events)
			}
		})
	}
}
