package perf

import (
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// purchaseTarget is the most a purchase's median may cost over the round trips of its
// own commands (issue 62: a purchase costs about what its round trips cost).
const purchaseTarget = 1.5

// perfPurchases sells through each of c.Purchase at a low open load (one buyer at a
// time) and sets the purchase's median beside the sum of its commands' round trips:
// each command a buyer sent, counted on the buyers' client and replayed by
// redis-benchmark on one connection against the same server, its median times how
// many a purchase sent. Rounds alternate the sale and the replay.
//
// redis-benchmark sends back to back, with both CPUs awake; the purchase comes alone
// every 1/rate seconds to a server that has gone idle meanwhile, and on a virtual
// machine waking an idle CPU costs tens of microseconds on each side. So the same
// commands are also sent from this process at the sale's pace (scenarios.Paced), a
// purchase's worth back to back: the purchase against those is what the harness adds.
func perfPurchases(ctx context.Context, e *bench.Env, c Config, stdout, stderr io.Writer) error {
	preset, err := scenarios.Lookup("flash-sale")
	if err != nil {
		return err
	}
	for _, name := range c.Purchase {
		impl, err := lockimpl.Lookup(name)
		if err != nil {
			return fmt.Errorf("perf: --purchase: %w", err)
		}
		s := preset
		s.Name, s.Prefix = "perf-purchase-"+name, "{stockbench-perf}"
		s.Buyers, s.Stock, s.Rate, s.Think = c.PurchaseBuyers, int64(c.PurchaseBuyers), c.PurchaseRate, scenarios.Fixed(0)
		var ours, theirs, paced []float64
		var trips []trip
		for r := range c.Rounds {
			p50, sent, err := purchaseSale(ctx, e, s, impl)
			if err != nil {
				return err
			}
			alone, err := replayPaced(ctx, e, sent, c.PurchaseBuyers, c.PurchaseRate)
			if err != nil {
				return err
			}
			sum, err := replay(ctx, e, c.Benchmark, sent)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "stockbench: perf round %d: %s purchase p50 %s, its round trips %s (redis-benchmark), %s (at its pace)\n", r+1, name, p50, sum, alone)
			ours, theirs, trips = append(ours, float64(p50)), append(theirs, float64(sum)), sent
			paced = append(paced, float64(alone))
		}
		o, t, a := median(ours), median(theirs), median(paced)
		us := func(v float64) time.Duration { return time.Duration(v).Round(time.Microsecond) }
		fmt.Fprintf(stdout, "purchase %-9s p50 %7s at --rate %g, think 0 (median of %d); its commands: %s\n",
			name, us(o), c.PurchaseRate, c.Rounds, describe(trips))
		fmt.Fprintf(stdout, "  their round trips %7s by redis-benchmark (-c 1, back to back), %s sent a purchase's worth at a time at the sale's pace from here\n", us(t), us(a))
		fmt.Fprintf(stdout, "ratio:            %8.2f to redis-benchmark's (target %.2f: %s); %.2f to theirs at its pace\n",
			o/t, purchaseTarget, met(o/t <= purchaseTarget), o/a)
	}
	return nil
}

// purchaseSale runs s through impl with the buyers' commands counted, and returns the
// purchase's median and each command's count per unit sold.
func purchaseSale(ctx context.Context, e *bench.Env, s scenarios.FlashSale, impl lockimpl.Impl) (time.Duration, []trip, error) {
	buyers := e.Shared.Client(s.WithDefaults().Conns)
	defer buyers.Close()
	count := &counter{by: map[string]*trip{}}
	buyers.AddHook(count)
	admin := e.Shared.Client(1)
	defer admin.Close()
	r := scenarios.Redis{Stock: buyers, Locks: []redis.UniversalClient{buyers},
		StockAdmin: admin, LockAdmins: []redis.UniversalClient{admin}}
	run, err := s.Run(ctx, r, impl)
	if err != nil {
		return 0, nil, fmt.Errorf("perf: %s purchase: %w", impl.Name, err)
	}
	if run.Oracle.Bought != s.Buyers {
		return 0, nil, fmt.Errorf("perf: the %s purchase sale sold %d of %d: %s", impl.Name, run.Oracle.Bought, s.Buyers, run.Verdict)
	}
	p50 := time.Duration(run.Latency[results.Purchase.String()].P50Us) * time.Microsecond
	return p50, count.perUnit(run.Oracle.Bought), nil
}

// trip is one command a buyer sent (the first of a pipeline), with how many a unit sold
// took and the arguments of one of them.
type trip struct {
	name    string
	perUnit float64
	args    []string
	// pipe is every command of its pipeline (none: nil), which the replay at the
	// sale's pace sends as one; redis-benchmark sends args, the first.
	pipe [][]any
}

// counter counts the round trips of a client by command, keeping one's arguments.
type counter struct {
	mu sync.Mutex
	by map[string]*trip
}

func (c *counter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *counter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.add(cmd, nil)
		return next(ctx, cmd)
	}
}

func (c *counter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 {
			c.add(cmds[0], cmds)
		}
		return next(ctx, cmds)
	}
}

func (c *counter) add(cmd redis.Cmder, pipeline []redis.Cmder) {
	if setUp[cmd.Name()] {
		return
	}
	key := cmd.FullName()
	if cmd.Name() == "evalsha" || cmd.Name() == "eval" {
		key += " " + fmt.Sprint(cmd.Args()[1]) // one script from another
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.by[key]
	if t == nil {
		args := make([]string, len(cmd.Args()))
		for i, a := range cmd.Args() {
			args[i] = fmt.Sprint(a)
		}
		t = &trip{name: key, args: args}
		for _, p := range pipeline {
			t.pipe = append(t.pipe, slices.Clone(p.Args()))
		}
		c.by[key] = t
	}
	t.perUnit++
}

// setUp are the commands the client sends on each new connection (go-redis: HELLO, and
// CLIENT MAINT_NOTIFICATIONS, which Redis 7 refuses), a connection's and not a
// purchase's: with fewer buyers than connections, they came to more than one in two.
var setUp = map[string]bool{"hello": true, "client": true, "auth": true, "select": true}

// perUnit is the commands a unit sold took, most first; those fewer than one in two
// units sent (a script's first load, say) are left out.
func (c *counter) perUnit(units int) []trip {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ts []trip
	for _, t := range c.by {
		if n := t.perUnit / float64(units); n >= 0.5 {
			u := *t
			u.perUnit = n
			ts = append(ts, u)
		}
	}
	slices.SortFunc(ts, func(a, b trip) int { return strings.Compare(a.name, b.name) })
	return ts
}

// replay has redis-benchmark send each of trips 5,000 times on one connection and
// returns the sum of their medians, each times its count per unit. Its keys are the
// sale's, whose prefix is deleted after.
func replay(ctx context.Context, e *bench.Env, bin string, trips []trip) (time.Duration, error) {
	host, port, err := net.SplitHostPort(e.Shared.Addr())
	if err != nil {
		return 0, fmt.Errorf("perf: %w", err)
	}
	c := e.Shared.Client(1)
	defer c.Close()
	defer deletePrefix(context.WithoutCancel(ctx), c, "{stockbench-perf}")
	var sum time.Duration
	for _, t := range trips {
		argv := append([]string{"-h", host, "-p", port, "-c", "1", "-n", "5000", "--precision", "3", "--csv"}, t.args...)
		out, err := exec.CommandContext(ctx, bin, argv...).Output()
		if err != nil {
			return 0, fmt.Errorf("perf: redis-benchmark %s: %w", t.name, err)
		}
		p50, err := benchmarkP50(out)
		if err != nil {
			return 0, fmt.Errorf("perf: redis-benchmark %s: %w", t.name, err)
		}
		sum += time.Duration(float64(p50) * t.perUnit)
	}
	return sum, nil
}

// replayPaced sends a purchase's commands (trips, each as many times as a unit took,
// rounded) back to back from one connection, n times (at most 400) at rate a second,
// and returns the median of those sequences: the purchase's round trips at its pace,
// with nothing of the harness around them.
func replayPaced(ctx context.Context, e *bench.Env, trips []trip, n int, rate float64) (time.Duration, error) {
	c := e.Shared.Client(1)
	defer c.Close()
	defer deletePrefix(context.WithoutCancel(ctx), c, "{stockbench-perf}")
	var seq [][][]any // round trips, each one command or a pipeline's
	for _, t := range trips {
		trip := t.pipe
		if trip == nil {
			args := make([]any, len(t.args))
			for i, a := range t.args {
				args[i] = a
			}
			trip = [][]any{args}
		}
		for range max(int(math.Round(t.perUnit)), 1) {
			seq = append(seq, trip)
		}
	}
	n = min(n, 400)
	took := make([]time.Duration, n)
	var failed error
	scenarios.Paced(ctx, n, rate, func(i int) {
		began := time.Now()
		for _, trip := range seq {
			if err := send(ctx, c, trip); err != nil && failed == nil {
				failed = err
			}
		}
		took[i] = time.Since(began)
	})
	if err := cmp.Or(ctx.Err(), failed); err != nil {
		return 0, fmt.Errorf("perf: a purchase's commands sent at its pace: %w", err)
	}
	return time.Duration(median(durations(took))), nil
}

// send sends one round trip: a command, or a pipeline of them.
func send(ctx context.Context, c redis.UniversalClient, trip [][]any) error {
	var err error
	if len(trip) == 1 {
		err = c.Do(ctx, trip[0]...).Err()
	} else {
		_, err = c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, args := range trip {
				p.Do(ctx, args...)
			}
			return nil
		})
	}
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

func durations(d []time.Duration) []float64 {
	f := make([]float64, len(d))
	for i, v := range d {
		f[i] = float64(v)
	}
	return f
}

// benchmarkP50 reads the median from redis-benchmark's --csv output (Redis 7: test,
// rps, avg, min, p50, ... in milliseconds).
func benchmarkP50(out []byte) (time.Duration, error) {
	rows, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(rows) < 2 {
		return 0, fmt.Errorf("no latency in its output %q", out)
	}
	col := slices.Index(rows[0], "p50_latency_ms")
	if col < 0 || col >= len(rows[len(rows)-1]) {
		return 0, fmt.Errorf("no p50_latency_ms column in %q", out)
	}
	ms, err := strconv.ParseFloat(rows[len(rows)-1][col], 64)
	if err != nil {
		return 0, fmt.Errorf("its p50 %q: %w", rows[len(rows)-1][col], err)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// describe is trips in a line: "GET 1 + EVALSHA 1.02", a pipeline marked.
func describe(trips []trip) string {
	parts := make([]string, len(trips))
	for i, t := range trips {
		name := strings.ToUpper(strings.Fields(t.name)[0])
		if len(t.pipe) > 0 {
			name += fmt.Sprintf(" (a pipeline of %d, which redis-benchmark sends as its first)", len(t.pipe))
		}
		parts[i] = fmt.Sprintf("%s ×%s", name, strconv.FormatFloat(math.Round(t.perUnit*100)/100, 'f', -1, 64))
	}
	return strings.Join(parts, " + ")
}

// deletePrefix deletes the keys under prefix.
func deletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) {
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}
