package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/lockimpl"
)

// TestMakePlan sizes sales whose shard count CPU sets, and memory, and checks each shard
// then fits both.
func TestMakePlan(t *testing.T) {
	lua, _ := lockimpl.Lookup("lua")
	token, _ := lockimpl.Lookup("token")
	cost := Cost{Driver: 20 * time.Microsecond, Redis: 8 * time.Microsecond, Commands: 3}
	for _, tc := range []struct {
		name   string
		in     PlanIn
		shards int
		by     string
	}{
		// 100,000/s at 20 µs: 2 cores, over 2 CPUs at 70%: 2 shards.
		{"cpu", PlanIn{Sale: FlashSale{Sale: Sale{Buyers: 1_000_000, Stock: 500}}, Impl: lua, Rate: 100_000, Cost: cost, ShardCPUs: 2, ShardMem: 2 << 30}, 2, "cpu"},
		// 10 million waiting buyers of 256 B: 2.6 GB, in 512 MiB shards: 6.
		{"memory", PlanIn{Sale: FlashSale{Sale: Sale{Buyers: 10_000_000, Stock: 500}}, Impl: token, Rate: 1000, Cost: cost, ShardCPUs: 2, ShardMem: 512 << 20}, 6, "memory"},
		{"one", PlanIn{Sale: FlashSale{Sale: Sale{Buyers: 1, Stock: 1}}, Impl: lua, Rate: 1, Cost: cost, ShardCPUs: 1, ShardMem: 1 << 30}, 1, "cpu"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := MakePlan(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", p)
			if p.Shards != tc.shards || p.By != tc.by {
				t.Errorf("%d shards by %s, want %d by %s", p.Shards, p.By, tc.shards, tc.by)
			}
			if p.ShardBytes > tc.in.ShardMem || p.ShardCores > tc.in.ShardCPUs*Headroom+1e-9 {
				t.Errorf("a shard of %d bytes and %.2f cores does not fit %d bytes and %g CPUs at %.0f%%", p.ShardBytes, p.ShardCores, tc.in.ShardMem, tc.in.ShardCPUs, Headroom*100)
			}
			if p.BuyersPerShard*p.Shards < tc.in.Sale.Buyers {
				t.Errorf("%d shards of %d buyers leave some of %d out", p.Shards, p.BuyersPerShard, tc.in.Sale.Buyers)
			}
			if want := tc.in.Rate * 8e-6; p.RedisCores < want*0.999 || p.RedisCores > want*1.001 || p.MaxRate != 125_000 {
				t.Errorf("Redis %.3f cores, max %.0f/s; want %.3f and 125000", p.RedisCores, p.MaxRate, want)
			}
		})
	}
	for _, bad := range []PlanIn{
		{Sale: FlashSale{Sale: Sale{Buyers: 10}}, Impl: lua, Rate: 0, Cost: cost, ShardCPUs: 1, ShardMem: 1 << 30},
		{Sale: FlashSale{Sale: Sale{Buyers: 10}}, Impl: lua, Rate: 5, Cost: Cost{}, ShardCPUs: 1, ShardMem: 1 << 30},
		{Sale: FlashSale{Sale: Sale{Buyers: 10}}, Impl: lua, Rate: 5, Cost: cost, ShardCPUs: 1, ShardMem: 1 << 20},
	} {
		if _, err := MakePlan(bad); err == nil || !strings.HasPrefix(err.Error(), "plan: ") {
			t.Errorf("%+v: got %v, want a plan: error", bad, err)
		}
	}
}
