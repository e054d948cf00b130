package scenarios

import (
	"fmt"
	"math"
	"time"

	"github.com/stockbench/stockbench/lockimpl"
)

// Cost is what one buyer of a sale costs, measured by a calibration sale of the same
// design and the same share of stock to buyers: the load generator's CPU (every try of
// the buyer's included), Redis's CPU and its commands (INFO commandstats).
type Cost struct {
	Driver, Redis time.Duration
	Commands      float64
}

// Headroom is the share of a shard's CPUs a plan fills: a load generator that runs its
// cores flat out starts its buyers late, and the latency it measures is its own.
const Headroom = 0.7

// PlanIn is what a plan sizes: a sale through a design at an open-load rate, its
// measured cost per buyer, and the size of one shard (its CPUs and its memory limit).
type PlanIn struct {
	Sale      FlashSale
	Impl      lockimpl.Impl
	Rate      float64
	Cost      Cost
	ShardCPUs float64
	ShardMem  int64
}

// Plan is how many shards of which size the sale needs, and what Redis must serve.
type Plan struct {
	Shards, BuyersPerShard int
	// ShardBytes is one shard's memory at its peak (its Footprint), and ShardCores the
	// cores its buyers keep busy at the rate.
	ShardBytes int64
	ShardCores float64
	// By says what set the shard count: "cpu" or "memory".
	By string
	// DriverCores is the load generators' CPU in all, at the rate.
	DriverCores float64
	// RedisCores is the Redis CPU the rate takes, CommandsPerSec its commands. A sale's
	// stock is one key, on one server, whose commands run on one core: MaxRate is the
	// most arrivals a second it serves.
	RedisCores, CommandsPerSec, MaxRate float64
	// RedisBytes is what the sale holds in Redis: its orders and the shards' connections.
	RedisBytes int64
}

// MakePlan sizes in's sale: enough shards that each keeps within Headroom of its CPUs at
// the rate and within its memory limit with its share of the buyers.
func MakePlan(in PlanIn) (Plan, error) {
	switch {
	case in.Rate <= 0:
		return Plan{}, fmt.Errorf("plan: a rate is needed: a plan sizes an open-load sale (buyers arriving per second), got %g", in.Rate)
	case in.Sale.Buyers < 1:
		return Plan{}, fmt.Errorf("plan: buyers must be positive, got %d", in.Sale.Buyers)
	case in.ShardCPUs <= 0 || in.ShardMem <= 0:
		return Plan{}, fmt.Errorf("plan: a shard needs CPUs and memory, got %g CPUs and %d bytes", in.ShardCPUs, in.ShardMem)
	case in.Cost.Driver <= 0:
		return Plan{}, fmt.Errorf("plan: the calibration measured no CPU per buyer")
	}
	p := Plan{DriverCores: in.Rate * in.Cost.Driver.Seconds()}
	byCPU := max(1, int(math.Ceil(p.DriverCores/(in.ShardCPUs*Headroom))))
	shardAt := func(n int) FlashSale {
		s := in.Sale
		s.Buyers = (in.Sale.Buyers + n - 1) / n
		return s
	}
	byMem := 1
	for shardAt(byMem).Footprint(in.Impl, false).Bytes > in.ShardMem {
		if byMem >= in.Sale.Buyers {
			return Plan{}, fmt.Errorf("plan: one buyer's share does not fit in %d bytes", in.ShardMem)
		}
		byMem = min(in.Sale.Buyers, byMem*2)
	}
	for byMem > 1 && shardAt(byMem-1).Footprint(in.Impl, false).Bytes <= in.ShardMem { // the fewest that fit
		byMem--
	}
	p.Shards, p.By = byCPU, "cpu"
	if byMem > byCPU {
		p.Shards, p.By = byMem, "memory"
	}
	p.Shards = min(p.Shards, in.Sale.Buyers)
	shard := shardAt(p.Shards)
	p.BuyersPerShard = shard.Buyers
	f := shard.Footprint(in.Impl, false)
	p.ShardBytes, p.ShardCores = f.Bytes, p.DriverCores/float64(p.Shards)
	p.RedisCores = in.Rate * in.Cost.Redis.Seconds()
	p.CommandsPerSec = in.Rate * in.Cost.Commands
	if in.Cost.Redis > 0 {
		p.MaxRate = 1 / in.Cost.Redis.Seconds()
	}
	s := in.Sale.WithDefaults()
	orders := min(int64(s.Buyers), s.Stock)
	p.RedisBytes = satMul(orders, redisOrder) + satMul(int64(f.Conns)*int64(p.Shards), redisConn)
	return p, nil
}
