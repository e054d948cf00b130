package scenarios

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/results"
)

// kind is one sort of sale inside the frame: its keys, its buyers (and workers), and how
// its outcome is read and judged. The frame does the rest, the same for every kind.
type kind interface {
	// setUp writes the sale's starting state, clearing what an earlier sale under the
	// same prefix left.
	setUp(ctx context.Context) error
	// leases are the sale's keys by server, for Sale.KeyLease; horizon is how long a
	// buyer or a task waits, which a stuck lock's lease must outlast (see keeper).
	leases() []leased
	horizon() time.Duration
	// run runs the buyers (and workers) until they are done or ctx ends.
	run(ctx context.Context, t *tally)
	// readFinal reads what the sale left in Redis, for conclude; an error when it cannot.
	readFinal(ctx context.Context) error
	// cleanUp deletes every key the sale wrote.
	cleanUp(ctx context.Context) error
	// conclude fills in run what the oracles found, the sale's figures and its settings;
	// unfired are the plan's faults that never struck.
	conclude(run *results.Run, unfired []string)
}

// runSale is the lifecycle of every sale on r: it builds the kind with the sale's fault
// injector (its faults acting for ttl), sets it up, warms the connections, starts the
// faults, runs the buyers under a watch of the servers and a lease on the keys, reads
// the outcome, cleans up and judges. It touches only keys under s.Prefix.
//
// When ctx ends early the buyers stop, the record is marked incomplete and runSale still
// returns it with what was measured; an error is returned only when the sale could not
// start, or together with an incomplete record when Redis failed under it.
func runSale(ctx context.Context, s Sale, r Redis, ttl time.Duration, build func(*faults.Injector) kind) (results.Run, error) {
	began := time.Now()
	sr, err := beginSale(ctx, s, r, ttl, build)
	if err != nil {
		return results.Run{}, err
	}
	var spent results.Spent
	spent.SetUp = time.Since(began)
	t := newTally(s)
	t.start = sr.at
	started := time.Now()
	goneErr := during(ctx, r.watched(s.Faults), keeper{lease: s.KeyLease, horizon: sr.k.horizon()}, sr.k.leases(), sr.inj, &sr.pings,
		func(ctx context.Context) {
			defer t.report(s, sr.inj)()
			sr.k.run(ctx, t)
		})
	var shardErr error
	if s.Shard.Sharded() && goneErr == nil {
		shardErr = s.Shard.finish(ctx, r.StockAdmin, s.Prefix) // the first shard reads the outcome once all finished
	}
	sr.stopBeat()
	spent.Selling = time.Since(started)

	// The sale's context may be over; the final reads and the clean-up still need Redis.
	after, cancel := afterSale(ctx, goneErr)
	defer cancel()
	end := sr.end(after, shardErr)
	run := results.Run{Scenario: s.Name, Complete: true, Started: started, Duration: time.Since(started)}
	sr.record(&run, t, end)
	spent.Judging = time.Since(started) - spent.Selling
	run.Spent = spent
	runErr := runError(goneErr, errors.Join(t.runErr(), shardErr, end.finalErr), end.cleanErr)
	switch {
	case runErr != nil:
		run.Complete, run.Error = false, runErr.Error()
	case ended(ctx):
		run.Complete, run.Error = false, "interrupted"
	}
	return run, runErr
}

// saleUnderWay is what runSale's steps share of a sale that has begun: its kind and
// faults, the servers' command counts before it, and, sharded, when it began.
type saleUnderWay struct {
	s   Sale
	r   Redis
	k   kind
	inj *faults.Injector
	// before are the servers' command counts at the start (of servers, as named);
	// statsErr says why they are not counted.
	before   results.ServerStats
	servers  string
	statsErr error
	// pings are the harness's own PINGs during the sale (watchServers), left out of its
	// commands: a design's own PING is a round trip like any other.
	pings atomic.Int64
	// at, late and attempt are a shard's start (startTogether); stopBeat stops its
	// heartbeat.
	at       time.Time
	late     time.Duration
	attempt  int64
	stopBeat func()
}

// beginSale builds the kind with the sale's faults, sets it up, warms the connections,
// counts the servers' commands, starts the faults and, for a shard, meets the other
// shards; what it started is cleaned up when it fails.
func beginSale(ctx context.Context, s Sale, r Redis, ttl time.Duration, build func(*faults.Injector) kind) (*saleUnderWay, error) {
	inj, err := faults.New(s.Faults, r.Servers, ttl, s.Prefix, s.Seed)
	if err != nil {
		return nil, err
	}
	sr := &saleUnderWay{s: s, r: r, k: build(inj), inj: inj, stopBeat: func() {}}
	if err := sr.k.setUp(ctx); err != nil {
		return nil, err
	}
	r.warm(ctx, s.Conns)
	sr.before, sr.servers, sr.statsErr = commandStats(ctx, r.admins())
	if !s.Shard.lead() {
		sr.statsErr = errNotLead // the first shard counts every shard's commands
	}
	if err := inj.Start(ctx); err != nil {
		sr.k.cleanUp(context.WithoutCancel(ctx)) // the design's processes, if any, go too
		return nil, err
	}
	if s.Shard.Sharded() {
		if sr.at, sr.late, sr.attempt, err = startTogether(ctx, s, r); err != nil {
			sr.k.cleanUp(context.WithoutCancel(ctx))
			return nil, err
		}
		sr.stopBeat = s.Shard.beat(ctx, r.StockAdmin, s.Prefix)
	}
	return sr, nil
}

// saleEnd is what the reads after a sale found: the servers' command counts, a missing
// shard, and what failed reading the final state or cleaning up.
type saleEnd struct {
	afterStats         results.ServerStats
	lost               *LostShards
	finalErr, cleanErr error
}

// end reads the servers' command counts and the final state (unless shards went
// missing while buying) on after, and cleans up every key the sale wrote.
func (sr *saleUnderWay) end(after context.Context, shardErr error) saleEnd {
	var e saleEnd
	if n := sr.s.Faults.Needs(); n.Sentinel || n.Cluster {
		reachable(after, sr.r.admins())
	}
	if sr.statsErr == nil {
		var now string
		e.afterStats, now, sr.statsErr = commandStats(after, sr.r.admins()) // before the final reads, which are not the sale's
		if sr.statsErr == nil && now != sr.servers {
			sr.statsErr = errors.New("commandstats: the servers changed during the sale (restarted or failed over), and their counts with them")
		}
	}
	// A shard missing may still be buying, unless it went silent: then what the final
	// state shows by itself (the stock below zero, the witness's overlaps) stands.
	if shardErr == nil || errors.As(shardErr, &e.lost) {
		e.finalErr = sr.k.readFinal(after)
	}
	e.cleanErr = sr.k.cleanUp(after)
	if s := sr.s; s.Shard.Sharded() && s.Shard.lead() {
		e.cleanErr = errors.Join(e.cleanErr, sr.r.StockAdmin.Del(after, shardKeys(s.Prefix).all()...).Err())
	}
	return e
}

// reachable waits, within ctx, until every client answers: after a failover the
// harness's clients may still hold connections to the old master, dead without a word
// (its container is gone), which must fail and go before the new master is dialled.
func reachable(ctx context.Context, cs []redis.UniversalClient) {
	for _, c := range cs {
		wait.Every(ctx, 50*time.Millisecond, func() bool { return c.Ping(ctx).Err() != nil })
	}
}

// record fills run with what the oracles found, the faults' events, the commands, the
// buyers' errors and a shard's place.
func (sr *saleUnderWay) record(run *results.Run, t *tally, e saleEnd) {
	sr.k.conclude(run, kindNames(sr.inj.NotFired()))
	run.DamageRate = run.NewRate()
	run.Events = sr.inj.Events()
	if sr.statsErr == nil {
		own := sr.pings.Load()
		if sr.s.Shard.Sharded() {
			own = results.PingsUnknown // the other shards' watchers ping the same servers
		}
		run.Commands = results.NewCommands(sr.before, e.afterStats, run.Oracle.Bought, own)
	}
	run.Errors, run.FirstError = t.errors()
	if s := sr.s; s.Shard.Sharded() {
		run.Shard = &results.ShardInfo{Index: s.Shard.Index, Count: s.Shard.Count, Late: sr.late, Attempt: sr.attempt}
		if e.lost != nil {
			run.Shard.Lost = e.lost.Indexes
		}
	}
}

// errNotLead: a shard other than the first does not count the servers' commands.
var errNotLead = errors.New("commandstats: counted by the first shard")

// startTogether waits at the shards' barrier and then for the sale's start, and returns
// the start on this host's clock, how late after it this shard began (its timer's
// slack, or longer when it heard of the start only after it had passed) and the attempt
// (the start on Redis's clock).
func startTogether(ctx context.Context, s Sale, r Redis) (at time.Time, late time.Duration, attempt int64, err error) {
	at, attempt, err = s.Shard.meet(ctx, r.StockAdmin, s.Prefix)
	if err != nil {
		// Leave the barrier, so that a run started again under the same name waits for
		// its shards rather than counting this one.
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		// Neither a sale under way nor another process with this index is this one's to
		// leave: it is counted there for them.
		if !errors.Is(err, ErrSaleUnderWay) && !errors.Is(err, ErrShardTaken) {
			r.StockAdmin.ZRem(bg, shardKeys(s.Prefix).arrived, s.Shard.Index)
		}
		return time.Time{}, 0, 0, err
	}
	if err := wait.Sleep(ctx, time.Until(at)); err != nil {
		return time.Time{}, 0, 0, err
	}
	return at, time.Since(at), attempt, nil
}

// during runs a sale's buyers and workers (run) while the watched servers are watched
// and the sale's keys leased (k says how, sets which keys), then stops the faults. run's
// context ends early with ErrRedisGone when a watched server stops answering; during
// then returns that error.
func during(ctx context.Context, watched []redis.UniversalClient, k keeper, sets []leased,
	inj *faults.Injector, pings *atomic.Int64, run func(context.Context)) error {
	sale, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	unwatch := watchServers(sale, stop, watched, inj.ServersSettled, pings)
	unlease := keepLeases(sale, k, sets)
	run(sale)
	unlease()
	inj.Stop()
	unwatch()
	if err := context.Cause(sale); errors.Is(err, ErrRedisGone) {
		return err
	}
	return nil
}

// afterSale is the context of the reads and the clean-up after a sale: not ctx, which
// may be over, but bounded; briefly when a server is known to be gone.
func afterSale(ctx context.Context, gone error) (context.Context, context.CancelFunc) {
	d := 10 * time.Second
	if gone != nil {
		d = time.Second
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// runError is the error that makes a run incomplete: a server gone says it all, else
// what the sale met, else a failed clean-up.
func runError(gone, saleErr, cleanErr error) error {
	switch {
	case gone != nil:
		return gone
	case saleErr != nil:
		return saleErr
	}
	return cleanErr
}

// kindNames writes kinds as the strings results.json holds.
func kindNames(kinds []faults.Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return names
}

// ended reports whether ctx is over. A command cut off by ctx's deadline fails with the
// socket's i/o timeout, which can reach the buyer a moment before ctx.Err() is set.
func ended(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}

// Outside is why a sale of a design under a fault it names in its Outside list does not
// run: its own processes dial Redis (a process adapter), and the fault acts on the
// harness's connections.
type Outside struct {
	Design string
	Fault  faults.Kind
}

func (o Outside) Error() string {
	return fmt.Sprintf("%s cannot take part in %s: its own processes dial Redis, and the fault acts on the harness's connections", o.Design, o.Fault)
}

// Refused is the Outside error of design under plan, or nil when it takes part in every
// fault of it.
func Refused(design string, outside []string, plan faults.Plan) error {
	if k, ok := plan.Among(outside); ok {
		return Outside{design, k}
	}
	return nil
}

// admit says what keeps a design from a sale under plan, before anything starts: it is no
// design (valid), or it cannot take part in one of the plan's faults.
func admit(design string, valid error, outside []string, plan faults.Plan) error {
	if valid != nil {
		return fmt.Errorf("%s: %w", design, valid)
	}
	return Refused(design, outside, plan)
}
