package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Drop makes a FlashSale a scheduled drop, as ticket drops go on sale in waves: a
// periodic job puts the stock on sale Waves times, one wave every Every, and the lock
// design under test is the scheduler lock of the instances that run it. The sale's
// Buyers are those scheduler instances, each polling for the lock; the one that holds it
// reads the schedule's state, fires what is due and releases. A wave fired twice (the
// periodic job run twice for one tick, as when a failover loses the scheduler lock) puts
// units on sale that the drop never had: OVERSOLD, with FIRED-TWICE and who fired each.
//
// The schedule's state is kept on the stock server, which the lock faults spare, so that
// what fires twice is the lock's doing: a holder that read the state, lost the lock and
// fired anyway.
type Drop struct {
	// Waves is how many waves the stock goes on sale in, the first ones taking the
	// remainder; 0 makes no drop (a flash sale of buyers).
	Waves int
	// Every is the time between two waves' due times. Default: DefaultDropEvery.
	Every time.Duration
}

// DefaultDropEvery is the time between a Drop's waves when it names none.
const DefaultDropEvery = 250 * time.Millisecond

// maxSchedulers bounds a drop's scheduler instances: each polls the lock several times a
// wave, and a thousand are already more than any deployment runs.
const maxSchedulers = 1000

// On reports whether d makes the sale a drop.
func (d Drop) On() bool { return d.Waves > 0 }

// poll is how often each scheduler instance tries for the lock: five times a wave.
func (d Drop) poll() time.Duration { return max(d.Every/5, 5*time.Millisecond) }

// units is what wave w (from 0) puts on sale of stock.
func (d Drop) units(stock int64, w int) int64 {
	n := stock / int64(d.Waves)
	if int64(w) < stock%int64(d.Waves) {
		n++
	}
	return n
}

func (d Drop) validate(s FlashSale) []error {
	var errs []error
	check := checker(&errs)
	check(d.Waves < 0, "waves must not be negative, got %d", d.Waves)
	check(d.Every < 0, "the time between waves must be positive, got %s", d.Every)
	if !d.On() {
		return errs
	}
	check(d.Waves > 10000, "waves must be at most 10000, got %d", d.Waves)
	check(s.Buyers > maxSchedulers, "a drop's buyers are its scheduler instances: at most %d, got %d", maxSchedulers, s.Buyers)
	check(s.Rate > 0, "a drop's scheduler instances start together: it takes no arrival rate")
	check(s.Shard.Sharded(), "a drop runs in one process: its schedulers share the schedule")
	check(s.CheckLinearizable, "a drop has no purchases to check for linearizability")
	return errs
}

// dropSale is a running Drop: the lock sale's design, clients, faults and lock oracles,
// with scheduler instances in place of buyers.
type dropSale struct {
	*lockSale
	next, fires string // the schedule's keys on the stock server
	fireLog     []oracle.Fire
	due         int // waves due by the time the schedulers stopped
	// fired and mu: a scheduler that saw every wave fired stops polling.
	mu    sync.Mutex
	fired bool
}

var _ kind = (*dropSale)(nil)

func newDropSale(ls *lockSale) *dropSale {
	next, fires := dropKeys(ls.Prefix)
	return &dropSale{lockSale: ls, next: next, fires: fires}
}

// dropKeys are the schedule's keys on the stock server: the next wave due, and the log
// of every fire.
func dropKeys(prefix string) (next, fires string) {
	return prefix + ":drop:next", prefix + ":drop:fires"
}

// run starts every scheduler instance together and waits for them.
func (d *dropSale) run(ctx context.Context, t *tally) {
	d.t, d.ctx, d.t0 = t, ctx, time.Now()
	var wg sync.WaitGroup
	for j := range d.Buyers {
		wg.Go(func() { d.schedule(ctx, j) })
	}
	wg.Wait()
	stopped := time.Since(d.t0)
	for w := range d.Drop.Waves {
		if d.dueAt(w) <= stopped {
			d.due = w + 1
		}
	}
}

// dueAt is when wave w is due, from the start.
func (d *dropSale) dueAt(w int) time.Duration { return time.Duration(w) * d.Drop.Every }

// deadline is when a scheduler stops polling: the last wave's due time plus the
// horizon a buyer waits, which a stuck lock outlives.
func (d *dropSale) deadline() time.Duration { return d.dueAt(d.Drop.Waves-1) + d.Retry.Timeout }

// done reports whether a scheduler saw every wave fired.
func (d *dropSale) done() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fired
}

// schedule is scheduler instance j: it tries for the lock once every poll, from an
// offset into the first poll the seed draws for it (instances started apart, whose
// clocks no one aligned), until every wave has fired or the deadline passed. One a
// fault killed holding the lock comes back a TTL later, as its supervisor restarts it.
func (d *dropSale) schedule(ctx context.Context, j int) {
	a := d.app(j)
	poll := d.Drop.poll()
	at := time.Duration(unit(d.Seed, j) * float64(poll))
	for ctx.Err() == nil && !d.done() && at <= d.deadline() {
		if wait.Until(ctx, d.t0.Add(at)) != nil {
			return
		}
		at += poll
		sent := time.Now()
		lease, err := a.locker.TryLock(ctx, d.lockKey, d.TTL)
		if err != nil {
			if !errors.Is(err, lockimpl.ErrNotAcquired) && !ended(ctx) {
				d.t.failed(fmt.Errorf("drop: scheduler %d: %w", j+1, err))
			}
			continue
		}
		d.t.measure(j, 0, results.Acquire, time.Since(sent))
		if d.hold(ctx, a, j, sent, lease) {
			// Dead holding the lock: restarted a TTL later, polls on from there.
			at = max(at, time.Since(d.t0)+d.TTL)
		}
	}
}

// hold is scheduler j's turn with the lock: read the schedule, suffer what the faults
// make of it, fire the wave due if one is, release. It reports whether the scheduler
// died holding the lock.
func (d *dropSale) hold(ctx context.Context, a *app, j int, sent time.Time, lease lockimpl.Lease) (died bool) {
	h := &hold{a: a}
	held := time.Now()
	rec := oracle.Hold{Buyer: j + 1, Sent: sent.Sub(d.t0), Enter: held.Sub(d.t0), Lease: promised(sent, d.TTL, lease).Sub(d.t0)}
	d.t.entered()
	err := d.fire(ctx, h, j, lease)
	d.t.left(errors.Is(err, errCrashed))
	leave := time.Now()
	rec.Read, rec.Wrote, rec.Leave = offset(h.read, d.t0), offset(h.wrote, d.t0), leave.Sub(d.t0)
	if errors.Is(err, errCrashed) {
		rec.Leave, rec.Died = h.died.Sub(d.t0), true
		d.record(rec)
		return true
	}
	if err != nil && !ended(ctx) && !errors.Is(err, lockimpl.ErrStale) {
		d.t.failed(err)
	}
	d.t.measure(j, 0, results.Critical, leave.Sub(held))
	lost, ok := d.release(ctx, h, j, lease, leave)
	if ok {
		rec.Released, rec.Expired = time.Since(d.t0), lost
	}
	d.record(rec)
	d.holds.classify(lease, leave.Sub(held), d.TTL, lost, h)
	return false
}

// fire reads the next wave due and, if its time has come, puts it on sale: the units,
// the record of who fired it, and the schedule moved past it, in one script. A fenced
// lease's token is checked by the store on both, as the flash sale's stock is.
func (d *dropSale) fire(ctx context.Context, h *hold, j int, lease lockimpl.Lease) error {
	var token int64
	if f, ok := lease.(lockimpl.Fenced); ok {
		token = f.Token()
	}
	fence := []string{d.stock.Fence, d.stock.Stale}
	next, err := readNextScript.Run(ctx, h.a.r.Stock, append([]string{d.next}, fence...), token).Int()
	if err != nil {
		return fmt.Errorf("drop: read the schedule: %w", err)
	}
	h.read = time.Now()
	if next < 0 {
		return lockimpl.ErrStale
	}
	if next >= d.Drop.Waves {
		d.mu.Lock()
		d.fired = true
		d.mu.Unlock()
		return nil
	}
	if time.Since(d.t0) < d.dueAt(next) {
		return nil
	}
	// The victims are the holders that have a wave to fire: the fifth is the fifth wave's.
	if v := d.inj.Firing(j+1, next, d.appOf(j)); v != (faults.Victim{}) {
		if err := d.suffer(ctx, h, j+1, lease, v); err != nil {
			return err
		}
	}
	at := time.Since(d.t0)
	f := oracle.Fire{Wave: next, Scheduler: j + 1, Units: d.Drop.units(d.Stock, next), At: at}
	keys := append([]string{d.stock.Key, d.fires, d.next}, fence...)
	ok, err := fireScript.Run(ctx, h.a.r.Stock, keys, next, f.Units, f.String(), token).Int()
	if err != nil {
		return fmt.Errorf("drop: fire wave %d: %w", next+1, err)
	}
	if ok == 0 {
		return lockimpl.ErrStale
	}
	h.wrote = time.Now()
	d.t.released(f.Units)
	// How late the wave went on sale after its due time: the drop's latency.
	d.t.measure(j, 0, results.Purchase, at-d.dueAt(next))
	return nil
}

// The store's side of the schedule. A fenced read registers its token as the flash
// sale's does, and a fenced fire must bring the token of the latest read; a token of 0
// is no fence. The schedule only moves forward: a late fire of an earlier wave does
// not set it back.
var (
	readNextScript = redis.NewScript(`
local t = tonumber(ARGV[1])
if t > 0 then
  local seen = tonumber(redis.call('GET', KEYS[2]) or '0')
  if t <= seen then
    redis.call('INCR', KEYS[3])
    return -1
  end
  redis.call('SET', KEYS[2], ARGV[1], 'KEEPTTL')
end
return tonumber(redis.call('GET', KEYS[1]) or '0')`)

	fireScript = redis.NewScript(`
if tonumber(ARGV[4]) > 0 and redis.call('GET', KEYS[4]) ~= ARGV[4] then
  redis.call('INCR', KEYS[5])
  return 0
end
redis.call('INCRBY', KEYS[1], ARGV[2])
redis.call('RPUSH', KEYS[2], ARGV[3])
local w = tonumber(ARGV[1]) + 1
if w > tonumber(redis.call('GET', KEYS[3]) or '0') then
  redis.call('SET', KEYS[3], w, 'KEEPTTL')
end
return 1`)
)

// readFinal reads the counter, the fire log and the lock.
func (d *dropSale) readFinal(ctx context.Context) error {
	c := d.r.StockAdmin
	stock, err := c.Get(ctx, d.stock.Key).Int64()
	gone := errors.Is(err, redis.Nil)
	if err != nil && !gone {
		return fmt.Errorf("drop: read final stock: %w", err)
	}
	recs, err := c.LRange(ctx, d.fires, 0, -1).Result()
	if err != nil {
		return fmt.Errorf("drop: read the fires: %w", err)
	}
	d.fireLog = d.fireLog[:0]
	for _, s := range recs {
		f, err := oracle.ParseFire(s)
		if err != nil {
			return fmt.Errorf("drop: read the fires: %w", err)
		}
		d.fireLog = append(d.fireLog, f)
	}
	stale, err := c.Get(ctx, d.stock.Stale).Int64()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("drop: read stale count: %w", err)
	}
	ttl, err := d.lockTTL(ctx)
	if err != nil {
		return err
	}
	d.final = &oracle.Final{Stock: stock, StockGone: gone, StaleRejected: stale, LockTTL: ttl,
		Horizon: d.Retry.Timeout, RenewalsAfterRelease: d.renewalsAfterRelease()}
	d.final.Errors, _ = d.t.errors()
	return nil
}

// conclude judges the fires and the holds, and fills run as a lock sale's record.
func (d *dropSale) conclude(run *results.Run, unfired []string) {
	r := oracle.CheckSchedule(d.Buyers, d.Drop.Waves, d.due, d.Stock, d.fireLog, d.ledger.Holds, d.final)
	if d.final != nil {
		r.StaleRejected = d.final.StaleRejected
	}
	d.judge(run, r, r.Outcome(), unfired)
	run.Params.Waves, run.Params.WaveEvery = d.Drop.Waves, d.Drop.Every.String()
	var sold []time.Duration
	for _, f := range r.Schedule.Fires {
		for range f.Units {
			sold = append(sold, f.At)
		}
	}
	run.Sales = results.Timeline(sold)
	if n := len(r.Schedule.Fires); n > 0 {
		run.SalesPerSec = float64(r.Schedule.Released) / r.Schedule.Fires[n-1].At.Seconds()
	}
}
