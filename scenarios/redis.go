package scenarios

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/results"
)

// Redis is what a sale runs on: the stock store and the lock servers (often one and the
// same server), and what its faults act on. A queue sale keeps its queue on the first
// lock server.
type Redis struct {
	// Stock is the buyers' client of the stock store.
	Stock redis.UniversalClient
	// Locks are the buyers' clients of the lock servers, as many as the design uses.
	Locks []redis.UniversalClient
	// StockAdmin and LockAdmins reach the same servers directly, never through a faulty
	// network, for setting up and reading the outcome. Default: Stock and Locks.
	StockAdmin redis.UniversalClient
	LockAdmins []redis.UniversalClient
	// Servers is what the sale's faults act on. Default: none, which only plans without
	// server or network faults can run on.
	Servers faults.Servers
	// Topology is how a design's own client reaches a Sentinel group or a cluster, when
	// the sale's Redis is one (lockimpl.Env.Topology). Default: nil.
	Topology *lockimpl.Topology
	// AppLocks, when set, opens application instance app's (from 1) clients of the
	// lock servers, as many as Locks, each through a path of its own that a fault
	// cutting one instance off acts on (faults.Needs.PerApp); whoever set it closes
	// them. Default: nil, every instance a pool like Locks', on their path.
	AppLocks func(app int) ([]redis.UniversalClient, error)
}

// Single is a Redis where one client serves as stock store and lock server.
func Single(c redis.UniversalClient) Redis { return Redis{Stock: c, Locks: []redis.UniversalClient{c}} }

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

// check says what r lacks for a sale with nodes lock servers.
func (r Redis) check(nodes int, design string) error {
	switch {
	case r.Stock == nil:
		return errors.New("redis: no stock store")
	case len(r.Locks) < nodes:
		return fmt.Errorf("%s needs %d lock servers, got %d", design, nodes, len(r.Locks))
	}
	return nil
}

// watched are the servers a sale cannot go on without: every one, but the lock servers
// the plan's faults stop, restart or kill on purpose (the first, or its first servers=k).
func (r Redis) watched(p faults.Plan) []redis.UniversalClient {
	all := r.admins()
	if !p.Needs().Owned {
		return all
	}
	struck := r.LockAdmins[:min(p.Servers(), len(r.LockAdmins))]
	return slices.DeleteFunc(all, func(c redis.UniversalClient) bool { return slices.Contains(struck, c) && c != r.StockAdmin })
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

// warm dials the buyers' connections before the clock starts, so that the first buyers'
// latency is not the cost of connecting.
func (r Redis) warm(ctx context.Context, conns int) {
	var wg sync.WaitGroup
	for _, c := range append([]redis.UniversalClient{r.Stock}, r.Locks...) {
		for range conns {
			wg.Go(func() { c.Ping(ctx) })
		}
	}
	wg.Wait()
}

// commandStats sums INFO commandstats and cpu over the servers, every master of a
// cluster. It also returns the servers' run ids: counts from before and after a sale
// make a delta only if the same servers gave them (a restart or a failover starts them
// again).
func commandStats(ctx context.Context, servers []redis.UniversalClient) (results.ServerStats, string, error) {
	sum := results.ServerStats{Calls: make(map[string]int64)}
	var ids []string
	var mu sync.Mutex
	read := func(ctx context.Context, c redis.Cmdable) error {
		var info strings.Builder
		for _, section := range []string{"commandstats", "cpu", "server"} { // one at a time: Redis 6 takes one
			s, err := c.Info(ctx, section).Result()
			if err != nil {
				return fmt.Errorf("commandstats: info %s: %w", section, err)
			}
			info.WriteString(s)
		}
		mu.Lock()
		defer mu.Unlock()
		sum.Add(results.ParseServerStats(info.String()))
		ids = append(ids, runID(info.String()))
		return nil
	}
	for _, c := range servers {
		var err error
		if cc, ok := c.(*redis.ClusterClient); ok {
			err = cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return read(ctx, m) })
		} else {
			err = read(ctx, c)
		}
		if err != nil {
			return sum, "", err
		}
	}
	slices.Sort(ids)
	return sum, strings.Join(ids, ","), nil
}

// runID is the run_id line of an INFO server reply.
func runID(info string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v
		}
	}
	return ""
}
