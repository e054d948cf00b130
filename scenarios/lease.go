package scenarios

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// leaseEvery is how often leases are renewed: a few commands a tick on the user's server.
const leaseEvery = 250 * time.Millisecond

// DefaultKeyLease is how long the keys of a sale on a user's own Redis outlive the last
// renewal by their harness: a run killed before its clean-up leaves nothing for longer.
const DefaultKeyLease = 10 * time.Minute

// leased is the keys of a sale on one server kept under a lease while the sale runs.
type leased struct {
	c redis.UniversalClient
	// data keys are always under the lease.
	data []string
	// locks keep the TTL their design gives them, which is what the sale measures, but
	// no longer than the lease; a lock with no TTL at all gets the lease once it has had
	// none for longer than a buyer waits, when it is stuck for good (and judged so).
	locks []string
}

// capLock caps a lock's TTL at the lease (ARGV[1], ms), and gives the lease to a lock
// without one when ARGV[2] is 1; it returns the TTL it found.
var capLock = redis.NewScript(`
local t = redis.call('PTTL', KEYS[1])
if t > tonumber(ARGV[1]) or (t == -1 and ARGV[2] == '1') then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return t`)

// keepLeases renews the leases of sets as k says, now and every leaseEvery until stop
// is called, so that a key a sale creates while it runs has a TTL within a moment (the
// sale's own writes keep a TTL: SET ... KEEPTTL). A zero lease keeps none.
func keepLeases(ctx context.Context, k keeper, sets []leased) (stop func()) {
	if k.lease <= 0 || len(sets) == 0 {
		return func() {}
	}
	k.noTTL = make(map[string]time.Time)
	ctx, cancel := context.WithCancel(ctx)
	k.renew(ctx, sets)
	var wg sync.WaitGroup
	wg.Go(func() { wait.Every(ctx, leaseEvery, func() bool { k.renew(ctx, sets); return true }) })
	return func() { cancel(); wg.Wait() }
}

// keeper is how keys are leased: for lease, renewed; horizon is how long a buyer waits
// for a lock, and lease should exceed it, so that a stuck lock given the lease is still
// judged stuck.
type keeper struct {
	lease, horizon time.Duration
	noTTL          map[string]time.Time // lock keys seen without a TTL, since when
}

// renew sets every lease once. Best effort: a server that does not answer now may later.
func (k *keeper) renew(ctx context.Context, sets []leased) {
	ms := strconv.FormatInt(k.lease.Milliseconds(), 10)
	for i, s := range sets {
		pipe := s.c.Pipeline()
		for _, key := range s.data {
			pipe.PExpire(ctx, key, k.lease)
		}
		pipe.Exec(ctx)
		for _, key := range s.locks {
			id := strconv.Itoa(i) + " " + key
			stuck := "0"
			if since, ok := k.noTTL[id]; ok && time.Since(since) > k.horizon+time.Second {
				stuck = "1"
			}
			t, err := capLock.Run(ctx, s.c, []string{key}, ms, stuck).Int64()
			switch {
			case err != nil:
			case t == -1:
				if _, ok := k.noTTL[id]; !ok {
					k.noTTL[id] = time.Now()
				}
			default:
				delete(k.noTTL, id)
			}
		}
	}
}
