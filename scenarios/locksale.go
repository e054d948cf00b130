package scenarios

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// lockSale is a running FlashSale: the kind the frame runs for a lock design. Buyer i
// writes only ledger entry i.
type lockSale struct {
	FlashSale
	r         Redis
	impl      lockimpl.Impl
	locker    lockimpl.Locker
	half      lockimpl.HalfLocker // nil unless the design takes two commands
	purchaser lockimpl.Purchaser
	script    lockimpl.Purchaser // the Atomic critical section
	inj       *faults.Injector
	starter   lockimpl.Starter // the design's own processes, if it has any
	stock     lockimpl.Stock
	lockKey   string
	ledger    *oracle.Ledger
	final     *oracle.Final
	t         *tally
	x         *executor // runs every buyer's Redis calls; see executor
	t0        time.Time

	log string // what the design's processes logged

	renewersMu sync.Mutex
	renewers   []lockimpl.Renewer // read at the end: a leaked renewal comes late
}

var _ kind = (*lockSale)(nil)

func newLockSale(s FlashSale, r Redis, impl lockimpl.Impl, inj *faults.Injector) *lockSale {
	ls := &lockSale{
		FlashSale: s, r: r, impl: impl, inj: inj,
		script: lockimpl.Lua{Client: r.Stock},
		ledger: oracle.NewLedger(s.Buyers, s.Stock),
	}
	ls.stock, ls.lockKey = s.keys()
	if impl.Retry != nil {
		ls.Retry = impl.Retry(ls.Retry)
	}
	ls.Retry.Abandon = ls.soldOut
	env := lockimpl.Env{Locks: r.Locks[:impl.LockNodes()], Stock: r.Stock, Retry: ls.Retry}
	if impl.NewPurchaser != nil {
		ls.purchaser = impl.NewPurchaser(env)
		ls.starter, _ = ls.purchaser.(lockimpl.Starter)
	} else {
		ls.locker = impl.NewLocker(env)
		ls.starter, _ = ls.locker.(lockimpl.Starter)
		ls.half, _ = ls.locker.(lockimpl.HalfLocker)
		ls.locker = &executed{ls.locker, ls}
		if s.Faults.Needs().Disrupts() { // see tally.tolerant
			ls.locker = persistent{ls.locker, ls}
		}
	}
	return ls
}

func (ls *lockSale) horizon() time.Duration { return ls.Retry.Timeout }

// leases are the sale's keys by server, for KeyLease.
func (ls *lockSale) leases() []leased {
	sets := []leased{{c: ls.r.StockAdmin, data: ls.stock.Keys()}}
	for _, c := range ls.r.LockAdmins {
		sets = append(sets, leased{c: c, data: []string{ls.lockKey + ":counter"}, locks: []string{ls.lockKey}})
	}
	return sets
}

// setUp writes the stock and clears what an earlier sale with the same prefix left.
func (ls *lockSale) setUp(ctx context.Context) error {
	if err := ls.r.StockAdmin.Del(ctx, ls.stock.Keys()...).Err(); err != nil {
		return fmt.Errorf("flash-sale: set up: del: %w", err)
	}
	for _, c := range ls.r.LockAdmins {
		if err := c.Del(ctx, ls.lockKeys()...).Err(); err != nil {
			return fmt.Errorf("flash-sale: set up: del lock: %w", err)
		}
	}
	if err := ls.r.StockAdmin.Set(ctx, ls.stock.Key, ls.Stock, ls.KeyLease).Err(); err != nil {
		return fmt.Errorf("flash-sale: set up: set stock: %w", err)
	}
	if ls.starter != nil {
		return ls.starter.Start(ctx, lockimpl.Sale{Lock: ls.lockKey, Stock: ls.stock, TTL: ls.TTL, Conns: ls.Conns})
	}
	return nil
}

// cleanUp stops the design's processes, if it has any, and deletes every key the sale
// wrote.
func (ls *lockSale) cleanUp(ctx context.Context) error {
	if ls.starter != nil {
		ls.log = ls.starter.Stop()
	}
	errs := []error{ls.r.StockAdmin.Del(ctx, ls.stock.Keys()...).Err()}
	for _, c := range ls.r.LockAdmins {
		errs = append(errs, c.Del(ctx, ls.lockKeys()...).Err())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("flash-sale: clean up: %w", err)
	}
	return nil
}

// run starts every buyer as the sale's pacer says, and waits for all of them. When ctx
// ends before every buyer started, the rest are counted as never started.
func (ls *lockSale) run(ctx context.Context, t *tally) {
	ls.t = t
	if ls.oneCall() {
		ls.runQueued(ctx)
		return
	}
	ls.x = newExecutor(ls.Conns, ls.Buyers)
	defer ls.x.stop()
	var wg sync.WaitGroup
	p := ls.Pacer()
	if _, rush := p.(Rush); !rush {
		ls.t0 = time.Now()
		next := 0
		arrived := arrive(ctx, ls.Buyers, p, ls.t0, func(n int) {
			for ; next < n; next++ {
				i, due := next, ls.t0.Add(p.Due(next))
				wg.Go(func() { ls.buy(ctx, i, due) })
			}
		})
		ls.interrupt(arrived)
		wg.Wait()
		return
	}
	// A closed load starts every buyer's goroutine first, so that all begin at once.
	start := make(chan struct{})
	for i := range ls.Buyers {
		// Starting a million goroutines takes a second or two: a stop meanwhile is heard.
		if i%4096 == 0 && ctx.Err() != nil {
			ls.interrupt(i)
			break
		}
		wg.Add(1)
		go ls.buyer(ctx, i, start, &wg)
	}
	ls.t0 = time.Now()
	close(start)
	wg.Wait()
}

// interrupt notes that the buyers from the ith on never started.
func (ls *lockSale) interrupt(from int) { ls.ledger.Unstarted = ls.Buyers - from }

// oneCall reports whether a purchase is a single call on a connection: a lock-free
// design that does not retry.
func (ls *lockSale) oneCall() bool {
	_, retries := ls.purchaser.(tryer)
	return ls.purchaser != nil && !retries
}

// runQueued runs a sale whose purchases are one call each. Such a buyer has nothing to
// wait for but a connection, so it needs no goroutine of its own: buyers queue, first
// come first served, and one worker per connection buys for each in turn (see feed).
// That saves the goroutine and two hand-overs per purchase, which is what lets the lua
// sale keep pace with redis-benchmark. Under a closed load every buyer arrives at the
// start.
func (ls *lockSale) runQueued(ctx context.Context) {
	ls.t0 = time.Now()
	feed(ctx, ls.Buyers, ls.Conns, ls.Pacer(), ls.t0,
		func(i int, at time.Time) { ls.buyQueued(ctx, i, at) }, ls.interrupt)
}

// readFinal reads the outcome from Redis.
func (ls *lockSale) readFinal(ctx context.Context) error {
	c := ls.r.StockAdmin
	stock, err := c.Get(ctx, ls.stock.Key).Int64()
	if err != nil {
		return fmt.Errorf("flash-sale: read final stock: %w", err)
	}
	orders, err := c.LLen(ctx, ls.stock.Orders).Result()
	if err != nil {
		return fmt.Errorf("flash-sale: count orders: %w", err)
	}
	stale, err := c.Get(ctx, ls.stock.Stale).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("flash-sale: read stale count: %w", err)
	}
	ttl, err := ls.lockTTL(ctx)
	if err != nil {
		return err
	}
	ls.final = &oracle.Final{
		Stock: stock, Orders: orders, StaleRejected: stale, LockTTL: ttl,
		Horizon: ls.Retry.Timeout, RenewalsAfterRelease: ls.renewalsAfterRelease(),
	}
	return nil
}

// renewalsAfterRelease sums what the released leases renewed after their release. A
// watchdog renews every third of the TTL, so a leaked one has shown itself after half.
func (ls *lockSale) renewalsAfterRelease() int {
	ls.renewersMu.Lock()
	defer ls.renewersMu.Unlock()
	if len(ls.renewers) > 0 {
		time.Sleep(ls.TTL / 2)
	}
	n := 0
	for _, r := range ls.renewers {
		_, after := r.Renewals()
		n += after
	}
	return n
}

// lockTTL is the longest time any lock server still holds the lock: zero when none does,
// negative when one holds it for good.
func (ls *lockSale) lockTTL(ctx context.Context) (time.Duration, error) {
	if ls.locker == nil {
		return 0, nil
	}
	var longest time.Duration
	for _, c := range ls.r.LockAdmins {
		d, err := c.PTTL(ctx, ls.lockKey).Result()
		if err != nil {
			return 0, fmt.Errorf("flash-sale: read lock ttl: %w", err)
		}
		switch {
		case d == -1: // no expiry: stuck for good
			return -1, nil
		case d > longest:
			longest = d
		}
	}
	return longest, nil
}

// judge runs the oracles over the ledger and the final state, and fills run.
func (ls *lockSale) judge(run *results.Run, unfired []string) {
	r := oracle.Check(ls.ledger, ls.final)
	run.Kind, run.Impl, run.Oracle = results.LockSale, ls.impl.Name, r
	run.Params = results.Params{
		Buyers: ls.Buyers, Stock: ls.Stock, Critical: string(ls.Critical), Think: ls.Think.String(),
		TTL: ls.TTL.String(), RetryInterval: ls.Retry.Interval.String(), RetryTimeout: ls.Retry.Timeout.String(), RetryJitter: ls.Retry.Jitter,
		Conns: ls.Conns, Seed: ls.Seed, Faults: ls.Faults.String(), Rate: ls.Rate, RampTo: ls.RampTo,
	}
	if ls.Warmup > 0 {
		run.Params.Warmup = ls.Warmup.String()
	}
	if ls.purchaser != nil {
		run.Params.Critical, run.Params.Think = "lua-script", "-"
	}
	verdict, findings := r.Verdict(), r.Findings()
	if ls.CheckLinearizable {
		lin := oracle.CheckLinearizable(ls.ledger, 10*time.Second)
		run.Linearizability = &lin
		if lin.Verdict == oracle.NotLinearizable {
			findings = append(findings, "NOT-LINEARIZABLE")
			verdict = strings.Join(findings, " ")
		}
	}
	want, _ := LockVerdicts(ls.impl.Name).For(ls.Faults)
	run.Judge(verdict, r.Class(), r.Cell(), findings, unfired, want)
	run.Log = ls.log
	if r.LastSale > 0 {
		run.SalesPerSec = float64(r.Bought) / r.LastSale.Seconds()
	}
	var sold []time.Duration
	entries := ls.ledger.Started()
	tries := make([]int32, len(entries))
	for i, e := range entries {
		if e.Outcome == oracle.Bought {
			sold = append(sold, e.Done)
		}
		tries[i] = e.Tries
	}
	run.Sales = results.Timeline(sold)
	run.Tries = results.NewTries(tries)
	run.Latency = ls.t.latencies(results.Acquire, results.Critical, results.Release, results.Purchase)
}
