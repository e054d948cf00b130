// Package rigtest runs tests' sales on the harness's rigs: the package's shared Redis
// (redistest.Shared) with a pool of servers beside it for the sales whose faults need
// their own, as the stockbench command runs them.
package rigtest

import (
	"context"
	"testing"
	"time"

	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// Harness is the package's shared server with a pool of servers beside it for tb's sales:
// the pool is closed when tb ends, the shared server when the package's tests end
// (redistest.Main).
func Harness(tb testing.TB) *rig.Harness {
	tb.Helper()
	pool, err := rig.NewPool(context.Background(), redistest.Shared(tb), redistest.Config())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { pool.Close(context.Background()) })
	return &rig.Harness{Shared: redistest.Shared(tb), Pool: pool}
}

// On runs a sale on h, on the servers need asks for beside the shared one; it fails tb
// when the servers cannot start or the sale cannot run.
func On(tb testing.TB, h *rig.Harness, need rig.Need, sale func(context.Context, scenarios.Redis) (results.Run, error)) results.Run {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := rig.On(ctx, h, need, sale)
	if err != nil {
		tb.Fatalf("run: %v", err)
	}
	return got
}
