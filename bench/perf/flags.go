package perf

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/stockbench/stockbench/bench/catalog"
)

// Bind binds perf's flags to fs over c's values; the func it returns, called once fs is
// parsed, reads --rss-buyers and checks c.
func (c *Config) Bind(fs *flag.FlagSet) func() error {
	fs.IntVar(&c.Sales, "sales", c.Sales, "units the lua sale and redis-benchmark each sell (one buyer per unit)")
	fs.IntVar(&c.Conns, "conns", c.Conns, "connections, for both")
	rss := fs.String("rss-buyers", "200000,1000000", "buyers of the waiting runs whose peak RSS is measured, comma-separated (0: skip them)")
	fs.IntVar(&c.Rounds, "rounds", c.Rounds, "rounds of (lua sale, redis-benchmark); each side's median is compared")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the lua sales (not of redis-benchmark) to this file")
	fs.BoolVar(&c.Adapters, "adapters", c.Adapters, "also run each shipped lock adapter and its Go counterpart on the flash-sale preset (from within the checkout)")
	purchase := fs.String("purchase", strings.Join(c.Purchase, ","), "designs whose purchase, one buyer at a time, is set beside its commands' round trips, comma-separated (empty: skip it)")
	fs.IntVar(&c.PurchaseBuyers, "purchase-buyers", c.PurchaseBuyers, "buyers of each of those sales")
	fs.Float64Var(&c.PurchaseRate, "purchase-rate", c.PurchaseRate, "their buyers a second")
	return func() error {
		c.Purchase = catalog.Split(*purchase)
		c.RSSBuyers = nil
		for _, part := range catalog.Split(*rss) {
			n, err := strconv.Atoi(part)
			if err != nil || n < 0 {
				return fmt.Errorf("perf: --rss-buyers: %q is not a number of buyers", part)
			}
			if n > 0 {
				c.RSSBuyers = append(c.RSSBuyers, n)
			}
		}
		return c.Validate()
	}
}

// Bind binds plan's flags to fs; the lock design's name goes where it returns.
func (z *Sizing) Bind(fs *flag.FlagSet) (lock *string) {
	lock = fs.String("lock", "lua", "the lock design the sale runs through")
	fs.IntVar(&z.Buyers, "buyers", 0, "buyers in the whole sale (required)")
	fs.Int64Var(&z.Stock, "stock", 500, "units for sale")
	fs.Float64Var(&z.Rate, "rate", 0, "buyers arriving per second (required: a plan sizes an open-load sale)")
	fs.Float64Var(&z.ShardCPUs, "shard-cpus", 2, "CPUs one shard gets (deploy/k8s/shards-job.yaml requests 2)")
	fs.StringVar(&z.ShardMemory, "shard-memory", "2GiB", "memory one shard may hold (deploy/k8s/shards-job.yaml's limit)")
	fs.IntVar(&z.Calibrate, "calibrate", 20000, "buyers of the sale run here to measure the per-buyer costs")
	return lock
}
