package live

import (
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
)

// bounds are the latency histogram's bucket bounds on /metrics, in seconds: from a
// tenth of a millisecond, where a lock-free sale's purchases are, to half a minute,
// where a queue's orders wait out a dead worker's lease.
var bounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// latency is a sale's main latency so far as /metrics serves it: the count at or under
// each bound, the count and the sum.
type latency struct {
	buckets map[float64]uint64
	count   uint64
	sum     float64
}

// latencyOf reads h (microseconds) into bounds. The sum is the count times the mean:
// HdrHistogram keeps no sum, and its mean is exact to its three digits.
func latencyOf(h *hdrhistogram.Histogram) latency {
	l := latency{buckets: make(map[float64]uint64, len(bounds)), count: uint64(h.TotalCount())}
	l.sum = h.Mean() * float64(h.TotalCount()) / 1e6
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		// A bar's values are equivalent to its From at the histogram's precision.
		at := float64(bar.From) / 1e6
		for _, b := range bounds {
			if at <= b {
				l.buckets[b] += uint64(bar.Count)
			}
		}
	}
	return l
}

// labels every sale's series carry: its place in the run (1-based, as the progress
// lines number it), its scenario, design and fault plan.
var labels = []string{"sale", "scenario", "design", "faults"}

var (
	descSold     = desc("sold_total", "Units sold so far (orders fulfilled; a drop's units put on sale).")
	descStock    = desc("stock", "Units the sale has to sell.")
	descBuyers   = desc("buyers", "Buyers (or a drop's scheduler instances) of the sale.")
	descDone     = desc("buyers_done_total", "Buyers whose order settled so far.")
	descOversold = desc("oversold_seen", "Units sold beyond the stock so far, as the sale saw it.")
	descOverlaps = desc("overlaps_seen_total", "Holders who entered the critical section while another was in it, as the sale saw it; the verdict tells broken locks from outlived leases.")
	descRepeats  = desc("repeats_seen_total", "Orders a queue worker settled again after one had, as the sale saw it.")
	descCrashed  = desc("crashed_total", "Holders and workers a fault killed holding the lock or a task.")
	descErrors   = desc("errors_total", "Errors buyers and workers met.")
	descRunning  = desc("running", "1 while the sale runs, 0 once it is done.")
	descLatency  = desc("latency_seconds", "The main latency so far: a purchase from the buyer's start, or a queued order from its arrival to its fulfilment.")
	descVerdict  = desc("verdict", "1 for the verdict's class once the sale is done.", "class")
	descActive   = desc("fault_active", "1 while a server fault of this kind is under way.", "fault")
	descStrikes  = desc("fault_strikes_total", "What the faults did so far, a strike each.", "fault")
	descSales    = prometheus.NewDesc("stockbench_sales", "Sales of the run by state: waiting, running, done.", []string{"state"}, nil)
)

func desc(name, help string, more ...string) *prometheus.Desc {
	return prometheus.NewDesc("stockbench_"+name, help, append(append([]string(nil), labels...), more...), nil)
}

// Describe implements prometheus.Collector.
func (b *Board) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(b, ch) }

// Collect implements prometheus.Collector: every sale that has started, read as the
// scrape comes, so that a run without a scraper pays nothing.
func (b *Board) Collect(ch chan<- prometheus.Metric) {
	st := b.State()
	states := map[string]int{Waiting: 0, Running: 0, Done: 0}
	for i, s := range st.Sales {
		states[s.State]++
		if s.State == Waiting {
			continue
		}
		lv := []string{strconv.Itoa(i + 1), s.Scenario, s.Design, s.Faults}
		metric := func(d *prometheus.Desc, t prometheus.ValueType, v float64, more ...string) {
			ch <- prometheus.MustNewConstMetric(d, t, v, append(lv, more...)...)
		}
		metric(descSold, prometheus.CounterValue, float64(s.Sold))
		metric(descStock, prometheus.GaugeValue, float64(s.Stock))
		metric(descBuyers, prometheus.GaugeValue, float64(s.Buyers))
		metric(descDone, prometheus.CounterValue, float64(s.Done))
		metric(descOversold, prometheus.GaugeValue, float64(s.Oversold))
		metric(descOverlaps, prometheus.CounterValue, float64(s.Seen.Overlaps))
		metric(descRepeats, prometheus.CounterValue, float64(s.Seen.Repeats))
		metric(descCrashed, prometheus.CounterValue, float64(s.Seen.Crashed))
		metric(descErrors, prometheus.CounterValue, float64(s.Seen.Errors))
		running := 0.0
		if s.State == Running {
			running = 1
		}
		metric(descRunning, prometheus.GaugeValue, running)
		if s.lat.buckets != nil {
			ch <- prometheus.MustNewConstHistogram(descLatency, s.lat.count, s.lat.sum, s.lat.buckets, lv...)
		}
		if s.State == Done && s.Cell != "" {
			metric(descVerdict, prometheus.GaugeValue, 1, class(s.Cell))
		}
		active, strikes := map[string]float64{}, map[string]float64{}
		for _, w := range s.Windows {
			strikes[w.Fault]++
			if w.Open {
				active[w.Fault] = 1
			} else if _, ok := active[w.Fault]; !ok {
				active[w.Fault] = 0
			}
		}
		for f, v := range active {
			metric(descActive, prometheus.GaugeValue, v, f)
			metric(descStrikes, prometheus.CounterValue, strikes[f], f)
		}
	}
	for state, n := range states {
		ch <- prometheus.MustNewConstMetric(descSales, prometheus.GaugeValue, float64(n), state)
	}
}

// class is a verdict cell's class: "OVERSOLD 5 BROKEN" is OVERSOLD.
func class(cell string) string {
	for i, r := range cell {
		if r == ' ' {
			return cell[:i]
		}
	}
	return cell
}
