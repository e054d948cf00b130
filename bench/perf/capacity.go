package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/internal/host"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// Sizing is the sale a capacity plan sizes and the shards it may use.
type Sizing struct {
	// Impl is the lock design the sale runs through.
	Impl lockimpl.Impl
	// Buyers and Stock are the whole sale's; Rate its buyers arriving per second (a plan
	// sizes an open-load sale).
	Buyers int
	Stock  int64
	Rate   float64
	// ShardCPUs and ShardMemory are what one shard gets (deploy/k8s/shards-job.yaml
	// requests 2 CPUs and limits memory to 2GiB), ShardMemory as Kubernetes writes it.
	ShardCPUs   float64
	ShardMemory string
	// Calibrate is how many buyers of the sale run here to measure the per-buyer costs.
	Calibrate int
}

// in is the plan's input without its measured costs, checked before anything starts.
func (z Sizing) in() (scenarios.PlanIn, scenarios.FlashSale, error) {
	mem, err := ParseSize(z.ShardMemory)
	switch {
	case err != nil:
		return scenarios.PlanIn{}, scenarios.FlashSale{}, fmt.Errorf("plan: --shard-memory: %w", err)
	case z.Buyers < 1 || z.Stock < 0:
		return scenarios.PlanIn{}, scenarios.FlashSale{}, fmt.Errorf("plan: --buyers must be positive and --stock not negative, got %d and %d", z.Buyers, z.Stock)
	case !(z.Rate > 0) || math.IsInf(z.Rate, 0):
		return scenarios.PlanIn{}, scenarios.FlashSale{}, fmt.Errorf("plan: --rate must be a positive number of buyers a second: a plan sizes an open-load sale, got %g", z.Rate)
	case !(z.ShardCPUs > 0) || z.ShardCPUs > 1024 || z.Calibrate < 1 || z.Calibrate > 1_000_000:
		return scenarios.PlanIn{}, scenarios.FlashSale{}, fmt.Errorf("plan: --shard-cpus must be from 0 to 1024 and --calibrate from 1 to 1,000,000")
	}
	sale, err := scenarios.Lookup("flash-sale")
	if err != nil {
		return scenarios.PlanIn{}, sale, err
	}
	sale.Buyers, sale.Stock = z.Buyers, z.Stock
	in := scenarios.PlanIn{Sale: sale, Impl: z.Impl, Rate: z.Rate, ShardCPUs: z.ShardCPUs, ShardMem: mem}
	probe := in
	probe.Cost = scenarios.Cost{Driver: 1}
	if _, err := scenarios.MakePlan(probe); err != nil {
		return in, sale, err // what no measurement changes
	}
	return in, sale, nil
}

// Check says what is wrong with z before a server is started for it.
func (z Sizing) Check() error {
	_, _, err := z.in()
	return err
}

// Capacity measures z's design here with a small sale of the same share of stock to
// buyers, on e's shared server, and prints how many shards of which size and what Redis
// the whole sale needs.
func Capacity(ctx context.Context, e *bench.Env, z Sizing, stdout, stderr io.Writer) error {
	in, sale, err := z.in()
	if err != nil {
		return err
	}
	cal := sale
	cal.Buyers = min(z.Calibrate, z.Buyers)
	cal.Stock = int64(math.Round(float64(z.Stock) * float64(cal.Buyers) / float64(z.Buyers)))
	if z.Stock > 0 {
		cal.Stock = max(cal.Stock, 1)
	}
	cal.Name, cal.Prefix = "plan", "{stockbench-plan}"
	fmt.Fprintf(stderr, "stockbench: measuring %s here: %s buyers, stock %d, all at once\n", z.Impl.Name, host.Count(cal.Buyers), cal.Stock)
	if in.Cost, err = calibrate(ctx, e, cal, z.Impl); err != nil {
		return err
	}
	p, err := scenarios.MakePlan(in)
	if err != nil {
		return err
	}
	writePlan(stdout, in, p, cal, fmt.Sprintf("a %s redis %s", e.Shared.Info.Kind, e.Shared.Info.Version), z.ShardMemory)
	return nil
}

// calibrate runs s and returns what each of its buyers cost: this process's CPU (the
// buyers, and the harness's little beside them), and Redis's CPU and commands.
func calibrate(ctx context.Context, e *bench.Env, s scenarios.FlashSale, impl lockimpl.Impl) (scenarios.Cost, error) {
	client := e.Shared.Client(s.WithDefaults().Conns)
	defer client.Close()
	before := cpuTime()
	run, err := s.Run(ctx, scenarios.Single(client), impl)
	spent := cpuTime() - before
	switch {
	case err != nil:
		return scenarios.Cost{}, fmt.Errorf("plan: the calibration sale: %w", err)
	case !run.Complete:
		return scenarios.Cost{}, fmt.Errorf("plan: the calibration sale did not complete: %s", run.Error)
	case run.Commands == nil:
		return scenarios.Cost{}, errors.New("plan: the calibration sale could not read Redis's command counts (INFO commandstats)")
	}
	n := float64(s.Buyers)
	return scenarios.Cost{
		Driver:   time.Duration(float64(spent) / n),
		Redis:    time.Duration(float64(run.Commands.CPUUs) * float64(time.Microsecond) / n),
		Commands: float64(run.Commands.Total) / n,
	}, nil
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// writePlan prints p; memory is --shard-memory as the user wrote it.
func writePlan(w io.Writer, in scenarios.PlanIn, p scenarios.Plan, cal scenarios.FlashSale, server, memory string) {
	rate := host.Count(int(math.Round(in.Rate)))
	fmt.Fprintf(w, "plan: %s buyers arriving at %s/s through %s, stock %d\n", host.Count(in.Sale.Buyers), rate, in.Impl.Name, in.Sale.Stock)
	fmt.Fprintf(w, "measured here (%s buyers, stock %d, all at once, on %s): per buyer %s of the load generator's CPU, %s of Redis's, %.1f commands\n",
		host.Count(cal.Buyers), cal.Stock, server, round(in.Cost.Driver), round(in.Cost.Redis), in.Cost.Commands)
	fmt.Fprintf(w, "load generators: %.2f cores at %s/s (a core drives %s buyers/s of this sale)\n",
		p.DriverCores, rate, host.Count(int(1/in.Cost.Driver.Seconds())))
	cpu := fmt.Sprintf("%.2f cores each, within %.0f%% of %g", p.ShardCores, scenarios.Headroom*100, in.ShardCPUs)
	mem := fmt.Sprintf("%s each at its peak, within %s", host.Size(p.ShardBytes), memory)
	by := "set by CPU: " + cpu + "; " + mem
	if p.By == "memory" {
		by = "set by memory: " + mem + "; " + cpu
	}
	fmt.Fprintf(w, "shards: %d of %s buyers, %g CPUs and %s of memory each (%s)\n",
		p.Shards, host.Count(p.BuyersPerShard), in.ShardCPUs, memory, by)
	fmt.Fprintf(w, "redis: %.2f of a core, %s commands/s, %s held (orders and the shards' connections)\n",
		p.RedisCores, host.Count(int(p.CommandsPerSec)), host.Size(p.RedisBytes))
	if p.MaxRate > 0 {
		verdict := "within it"
		if in.Rate > p.MaxRate {
			verdict = "MORE than one server can take: lower the rate, or the design's commands per buyer"
		}
		fmt.Fprintf(w, "  the stock is one key, on one server, whose commands run on one core: at most %s buyers/s of this sale; %s/s is %s\n",
			host.Count(int(p.MaxRate)), rate, verdict)
	}
	fmt.Fprintf(w, "run it: STOCKBENCH_SHARDS=%d in deploy/sale/sale.env, and each shard: run --lock %s --buyers %d --stock %d --rate %s\n",
		p.Shards, in.Impl.Name, in.Sale.Buyers, in.Sale.Stock, strconv.FormatFloat(in.Rate, 'f', -1, 64))
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d >= 10*time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d.Round(10 * time.Nanosecond)
}

// ParseSize reads a byte count as Kubernetes writes one: 2GiB, 2Gi, 512MiB, 1G, 1000.
func ParseSize(v string) (int64, error) {
	num := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.TrimSuffix(strings.TrimPrefix(v, num), "B")
	n, err := strconv.ParseInt(num, 10, 64)
	mult := map[string]int64{"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}[unit]
	if err != nil || mult == 0 || n <= 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("a size as 2GiB, 512Mi or 1G, got %q", v)
	}
	return n * mult, nil
}
