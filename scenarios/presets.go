package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/stockbench/stockbench/lockimpl"
)

// Preset is a named flash sale; command-line flags override its fields.
type Preset struct {
	Name    string
	Summary string
	Sale    FlashSale
}

var presets = []Preset{
	{
		Name:    "flash-sale",
		Summary: "2,000 buyers race for 500 units; holders work 1ms, well inside the 2s TTL",
		Sale: FlashSale{
			Buyers: 2000, Stock: 500, Critical: ReadThinkWrite, Think: Fixed(time.Millisecond),
			TTL: 2 * time.Second, Conns: 64,
			Retry: lockimpl.Retry{Interval: 100 * time.Millisecond, Timeout: 30 * time.Second},
		},
	},
	{
		Name:    "slow-holder",
		Summary: "as flash-sale, but 1% of holders work 1.5s, past the 1s TTL",
		Sale: FlashSale{
			Buyers: 2000, Stock: 500, Critical: ReadThinkWrite, Think: Think{kind: "longtail", base: time.Millisecond, alt: 1500 * time.Millisecond, p: 0.01},
			TTL: time.Second, Conns: 64,
			Retry: lockimpl.Retry{Interval: 100 * time.Millisecond, Timeout: 30 * time.Second},
		},
	},
	{
		Name:    "fault-sale",
		Summary: "100 buyers race for 30 units, 1s TTL, jittered retries, 10s patience: quick enough to run every design under every fault",
		Sale: FlashSale{
			Buyers: 100, Stock: 30, Critical: ReadThinkWrite, Think: Fixed(time.Millisecond),
			TTL: time.Second, Conns: 32,
			Retry: lockimpl.Retry{Interval: 20 * time.Millisecond, Jitter: 0.5, Timeout: 10 * time.Second},
		},
	},
	{
		Name:    "rush",
		Summary: "200,000 buyers race for 500 units; holders work 2ms",
		Sale: FlashSale{
			Buyers: 200000, Stock: 500, Critical: ReadThinkWrite, Think: Fixed(2 * time.Millisecond),
			TTL: 2 * time.Second, Conns: 64,
			Retry: lockimpl.Retry{Interval: 100 * time.Millisecond, Timeout: 30 * time.Second},
		},
	},
}

// DefaultMatrix names the presets `stockbench matrix` runs by default: a sale small
// enough to put every design under every fault in a few minutes.
var DefaultMatrix = []string{"fault-sale"}

// Presets returns every preset.
func Presets() []Preset { return append([]Preset(nil), presets...) }

// Lookup returns the preset named name, with Name set on its sale.
func Lookup(name string) (FlashSale, error) {
	var names []string
	for _, p := range presets {
		if p.Name == name {
			s := p.Sale
			s.Name = p.Name
			return s, nil
		}
		names = append(names, p.Name)
	}
	return FlashSale{}, fmt.Errorf("unknown scenario %q (known: %s)", name, strings.Join(names, ", "))
}

// QueuePreset is a named queue sale; command-line flags override its fields.
type QueuePreset struct {
	Name    string
	Summary string
	Sale    QueueSale
}

var queuePresets = []QueuePreset{
	{
		Name:    "queue-sale",
		Summary: "200 buyers queue orders for 150 units; 4 workers, 1ms each, 300ms visibility timeout",
		Sale:    QueueSale{Buyers: 200, Stock: 150, Workers: 4, Work: time.Millisecond, Visibility: 300 * time.Millisecond, Conns: 32},
	},
}

// DefaultQueueMatrix names the queue presets `stockbench matrix` runs by default.
var DefaultQueueMatrix = []string{"queue-sale"}

// QueuePresets returns every queue preset.
func QueuePresets() []QueuePreset { return append([]QueuePreset(nil), queuePresets...) }

// LookupQueue returns the queue preset named name, with Name set on its sale.
func LookupQueue(name string) (QueueSale, error) {
	var names []string
	for _, p := range queuePresets {
		if p.Name == name {
			s := p.Sale
			s.Name = p.Name
			return s, nil
		}
		names = append(names, p.Name)
	}
	return QueueSale{}, fmt.Errorf("unknown queue scenario %q (known: %s)", name, strings.Join(names, ", "))
}
