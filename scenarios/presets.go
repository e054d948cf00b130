package scenarios

import (
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/registry"
	"github.com/stockbench/stockbench/lockimpl"
)

// Preset is a named sale, a FlashSale or a QueueSale; command-line flags override its
// fields.
type Preset[S FlashSale | QueueSale] struct {
	Name    string
	Summary string
	Sale    S
}

// polling is the flash-sale presets' acquire loop: a buyer polls every 100ms for 30s.
var polling = lockimpl.Retry{Interval: 100 * time.Millisecond, Timeout: 30 * time.Second}

var presets = registry.New("scenario", presetName[FlashSale], nil,
	Preset[FlashSale]{
		Name:    "flash-sale",
		Summary: "2,000 buyers race for 500 units; holders work 1ms, well inside the 2s TTL",
		Sale: FlashSale{Sale: Sale{Buyers: 2000, Stock: 500, Conns: 64},
			Critical: ReadThinkWrite, Think: Fixed(time.Millisecond), TTL: 2 * time.Second, Retry: polling},
	},
	Preset[FlashSale]{
		Name:    "slow-holder",
		Summary: "as flash-sale, but 1% of holders work 1.5s, past the 1s TTL",
		Sale: FlashSale{Sale: Sale{Buyers: 2000, Stock: 500, Conns: 64},
			Critical: ReadThinkWrite, Think: LongTail(time.Millisecond, 1500*time.Millisecond, 0.01), TTL: time.Second, Retry: polling},
	},
	Preset[FlashSale]{
		Name:    "fault-sale",
		Summary: "100 buyers race for 30 units, 1s TTL, jittered retries, 10s patience: quick enough to run every design under every fault",
		Sale: FlashSale{Sale: Sale{Buyers: 100, Stock: 30, Conns: 32},
			Critical: ReadThinkWrite, Think: Fixed(time.Millisecond), TTL: time.Second,
			Retry: lockimpl.Retry{Interval: 20 * time.Millisecond, Jitter: 0.5, Timeout: 10 * time.Second}},
	},
	Preset[FlashSale]{
		Name: "headline",
		Summary: "200,000 buyers race for 1,000 units through 4 application instances, each serving 16 at once on 16 connections, " +
			"buyers waiting 2s at most; 1% of holders pause (exponential, mean 1.5 TTL), as under garbage collection: what a reader compares first",
		Sale: FlashSale{Sale: Sale{Buyers: 200000, Stock: 1000, Conns: 16, Faults: headlineFaults},
			Apps: 4, Serve: 16, Critical: ReadThinkWrite, Think: Fixed(time.Millisecond), TTL: 500 * time.Millisecond,
			Retry: lockimpl.Retry{Interval: 50 * time.Millisecond, Jitter: 0.5, Timeout: 2 * time.Second}},
	},
	Preset[FlashSale]{
		Name: "drop-sale",
		Summary: "a ticket drop: 40 units go on sale in 8 waves, one every 250ms, fired by 3 scheduler instances " +
			"(each an application instance) that take the lock design as their scheduler lock (1s TTL); a wave fired twice oversells",
		Sale: FlashSale{Sale: Sale{Buyers: 3, Stock: 40, Conns: 4}, Apps: 3, TTL: time.Second,
			Drop:  Drop{Waves: 8, Every: 250 * time.Millisecond},
			Retry: lockimpl.Retry{Interval: 20 * time.Millisecond, Timeout: 5 * time.Second}},
	},
	Preset[FlashSale]{
		Name:    "rush",
		Summary: "200,000 buyers race for 500 units; holders work 2ms",
		Sale: FlashSale{Sale: Sale{Buyers: 200000, Stock: 500, Conns: 64},
			Critical: ReadThinkWrite, Think: Fixed(2 * time.Millisecond), TTL: 2 * time.Second, Retry: polling},
	},
)

var queuePresets = registry.New("queue scenario", presetName[QueueSale], nil,
	Preset[QueueSale]{
		Name:    "queue-sale",
		Summary: "200 buyers queue orders for 150 units; 4 workers, 1ms each, 300ms visibility timeout",
		Sale: QueueSale{Sale: Sale{Buyers: 200, Stock: 150, Conns: 32},
			Workers: 4, Work: time.Millisecond, Visibility: 300 * time.Millisecond},
	},
)

func presetName[S FlashSale | QueueSale](p Preset[S]) string { return p.Name }

// headlineFaults is the headline sale's pause rate.
var headlineFaults = faults.Plan{{Kind: faults.ClientPause, P: 0.01, Dist: faults.Exp}}

// Headline names the designs the headline sale compares first, as make bench runs it.
var Headline = []string{"lua", "watch", "set-nx-ex", "token-watchdog", "fencing", "redislock"}

// DefaultMatrix names the presets `stockbench matrix` runs by default: a sale small
// enough to put every design under every fault in a few minutes.
var DefaultMatrix = []string{"fault-sale"}

// DefaultQueueMatrix names the queue presets `stockbench matrix` runs by default.
var DefaultQueueMatrix = []string{"queue-sale"}

// Presets returns every flash-sale preset.
func Presets() []Preset[FlashSale] { return presets.All() }

// QueuePresets returns every queue preset.
func QueuePresets() []Preset[QueueSale] { return queuePresets.All() }

// Lookup returns the flash-sale preset named name, with Name set on its sale.
func Lookup(name string) (FlashSale, error) {
	p, err := presets.Lookup(name)
	p.Sale.Name = p.Name
	return p.Sale, err
}

// LookupQueue returns the queue preset named name, with Name set on its sale.
func LookupQueue(name string) (QueueSale, error) {
	p, err := queuePresets.Lookup(name)
	p.Sale.Name = p.Name
	return p.Sale, err
}
