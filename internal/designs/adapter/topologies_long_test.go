//go:build long

package adapter

import (
	"context"
	"fmt"
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/oracle"
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
