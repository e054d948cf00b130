package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// Redis is what a sale runs on: the stock store and the lock servers (often one and the
// same server), and what its faults act on.
type Redis struct {
	// Stock is the buyers' client of the stock store.
	Stock redis.UniversalClient
	// Locks are the buyers' clients of the lock servers, as many as the design uses.
	Locks []redis.UniversalClient
	// StockAdmin and LockAdmins reach the same servers directly, never through a faulty
	// network, for setting up and reading the outcome. Default: Stock and Locks.
	StockAdmin redis.UniversalClient
	LockAdmins []redis.UniversalClient
	// Servers is what the sale's faults act on.
	Servers faults.Servers
}

func (r Redis) withDefaults() Redis {
	if r.StockAdmin == nil {
		r.StockAdmin = r.Stock
	}
	if r.LockAdmins == nil {
		r.LockAdmins = r.Locks
	}
	if r.Servers.Admin == nil && len(r.LockAdmins) > 0 {
		r.Servers.Admin = r.LockAdmins[0]
	}
	return r
}

// Single is a Redis where one client serves as stock store and lock server.
func Single(c redis.UniversalClient) Redis { return Redis{Stock: c, Locks: []redis.UniversalClient{c}} }

// Run runs the sale on r with impl and returns its record. It touches only keys under
// s.Prefix and deletes them at the end.
//
// When ctx ends early the buyers stop, the record is marked incomplete and Run still
// returns it with what was measured; an error is returned only when the sale could not
// start, or together with an incomplete record when Redis failed under it.
func (s FlashSale) Run(ctx context.Context, r Redis, impl lockimpl.Impl) (results.Run, error) {
	if err := s.Validate(); err != nil {
		return results.Run{}, err
	}
	s = s.WithDefaults()
	r = r.withDefaults()
	if len(r.Locks) < impl.LockNodes() {
		return results.Run{}, fmt.Errorf("%s needs %d lock servers, got %d", impl.Name, impl.LockNodes(), len(r.Locks))
	}
	inj, err := faults.New(s.Faults, r.Servers, s.TTL, s.Prefix)
	if err != nil {
		return results.Run{}, err
	}
	if err := s.setUp(ctx, r); err != nil {
		return results.Run{}, err
	}
	warm(ctx, r, s.Conns)
	sl := newSale(s, r, impl, inj)
	before, statsErr := commandStats(ctx, r.admins())
	if err := inj.Start(ctx); err != nil {
		return results.Run{}, err
	}

	started := time.Now()
	goneErr := during(ctx, r.watched(s.Faults), keeper{lease: s.KeyLease, horizon: s.Retry.Timeout}, s.leases(r), inj, sl.run)

	// The sale's context may be over; the final reads and the clean-up still need Redis.
	after, cancel := afterSale(ctx, goneErr)
	defer cancel()
	var afterStats results.ServerStats
	if statsErr == nil {
		afterStats, statsErr = commandStats(after, r.admins()) // before the final reads, which are not the sale's
	}
	final, finalErr := sl.final(after)
	cleanErr := s.cleanUp(after, r)

	report := oracle.Check(sl.ledger, final)
	run := s.record(impl, started, report, sl, kindNames(inj.NotFired()))
	run.Events = inj.Events()
	if s.CheckLinearizable {
		lin := oracle.CheckLinearizable(sl.ledger, 10*time.Second)
		run.Linearizability = &lin
		if lin.Verdict == "not linearizable" {
			run.Findings = append(run.Findings, "NOT-LINEARIZABLE")
			run.Verdict = strings.Join(run.Findings, " ")
		}
	}
	if statsErr == nil {
		run.Commands = results.NewCommands(before, afterStats, report.Bought)
	}
	run.Errors = int(sl.failures.Load())
	if sl.firstErr != nil {
		run.FirstError = sl.firstErr.Error()
	}
	runErr := runError(goneErr, errors.Join(sl.runErr(), finalErr), cleanErr)
	switch {
	case runErr != nil:
		run.Complete, run.Error = false, runErr.Error()
	case ended(ctx):
		run.Complete, run.Error = false, "interrupted"
	}
	return run, runErr
}

// during runs a sale's buyers and workers (run) while the watched servers are watched
// and the sale's keys leased (k says how, sets which keys), then stops the faults. run's
// context ends early with ErrRedisGone when a watched server stops answering; during
// then returns that error.
func during(ctx context.Context, watched []redis.UniversalClient, k keeper, sets []leased,
	inj *faults.Injector, run func(context.Context)) error {
	sale, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	unwatch := watchServers(sale, stop, watched)
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

// watched are the servers a sale cannot go on without: every one, but the lock server
// when the plan's faults stop, restart or kill it on purpose.
func (r Redis) watched(p faults.Plan) []redis.UniversalClient {
	all := r.admins()
	if !p.Needs().Owned {
		return all
	}
	return slices.DeleteFunc(all, func(c redis.UniversalClient) bool { return c == r.LockAdmins[0] && c != r.StockAdmin })
}

func kindNames(kinds []faults.Kind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return names
}

// admins are the distinct servers of r, by their direct clients.
func (r Redis) admins() []redis.UniversalClient {
	all := []redis.UniversalClient{r.StockAdmin}
	for _, c := range r.LockAdmins {
		if !slices.Contains(all, c) {
			all = append(all, c)
		}
	}
	return all
}

// commandStats sums INFO commandstats and cpu over the servers; on a cluster the figures
// would cover one node only, so it declines.
func commandStats(ctx context.Context, servers []redis.UniversalClient) (results.ServerStats, error) {
	sum := results.ServerStats{Calls: make(map[string]int64)}
	for _, c := range servers {
		if _, ok := c.(*redis.ClusterClient); ok {
			return sum, errors.New("commandstats: not read on a cluster")
		}
		var info strings.Builder
		for _, section := range []string{"commandstats", "cpu"} { // one at a time: Redis 6 takes one
			s, err := c.Info(ctx, section).Result()
			if err != nil {
				return sum, fmt.Errorf("commandstats: info %s: %w", section, err)
			}
			info.WriteString(s)
		}
		sum.Add(results.ParseServerStats(info.String()))
	}
	return sum, nil
}

// warm dials the buyers' connections before the clock starts, so that the first buyers'
// latency is not the cost of connecting.
func warm(ctx context.Context, r Redis, conns int) {
	var wg sync.WaitGroup
	for _, c := range append([]redis.UniversalClient{r.Stock}, r.Locks...) {
		for range conns {
			wg.Go(func() { c.Ping(ctx) })
		}
	}
	wg.Wait()
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
