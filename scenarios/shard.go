package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// Shard makes a sale one of Count shards of a sale too big for one load generator, run
// by as many processes on as many machines (a Kubernetes Indexed Job's pods). Every shard
// is given the same sale; shard Index takes every Count-th buyer of the sale's one seeded
// arrival schedule, from buyer Index on, so each buyer keeps the start it was due at and
// the one buyer number names it in every shard's record.
//
// The shards meet in Redis, under the sale's prefix: shard 0 writes the stock, and every
// shard starts at one moment read from Redis's clock (TIME), since the hosts' own clocks
// do not agree. Shard 0 waits for the others to finish, reads the outcome and deletes
// the sale's keys. Each shard's record is partial; a merge of all of them is the sale's.
type Shard struct {
	Index, Count int
	// Join is how long a shard waits for the others to arrive, and shard 0 for them to
	// finish after its own buyers did. Default: DefaultJoin.
	Join time.Duration
}

// DefaultJoin is how long shards wait for one another by default: pods of one Job may be
// scheduled a minute apart.
const DefaultJoin = 2 * time.Minute

// startMargin is how far after the last shard's arrival the sale starts: every shard,
// polling the barrier, hears of the start before it comes.
const startMargin = 500 * time.Millisecond

// Sharded reports whether s is one shard of several.
func (s Shard) Sharded() bool { return s.Count > 1 }

// lead reports whether s is the shard that writes the stock and reads the outcome.
func (s Shard) lead() bool { return s.Index == 0 }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// ParseShard reads "i/n", as --shard takes it.
func ParseShard(v string) (Shard, error) {
	i, n, ok := strings.Cut(v, "/")
	index, err1 := strconv.Atoi(i)
	count, err2 := strconv.Atoi(n)
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard must be i/n, as 0/4, got %q", v)
	}
	s := Shard{Index: index, Count: count}
	if count < 1 {
		return s, fmt.Errorf("shard count must be at least 1, got %d", count)
	}
	return s, s.validate(0)
}

// validate says what is wrong with s for a sale of buyers buyers (0: not known yet).
func (s Shard) validate(buyers int) error {
	switch {
	case s.Count == 0 && s.Index == 0:
		return nil
	case s.Count < 1:
		return fmt.Errorf("shard count must be at least 1, got %d", s.Count)
	case s.Index < 0 || s.Index >= s.Count:
		return fmt.Errorf("shard index must be from 0 to %d, got %d", s.Count-1, s.Index)
	case buyers > 0 && s.Count > buyers:
		return fmt.Errorf("%d shards need at least %d buyers, got %d", s.Count, s.Count, buyers)
	case s.Join < 0:
		return fmt.Errorf("shard join must not be negative, got %s", s.Join)
	}
	return nil
}

// buyers is how many of a sale's n buyers are the shard's.
func (s Shard) buyers(n int) int {
	if !s.Sharded() {
		return n
	}
	return (n - s.Index + s.Count - 1) / s.Count
}

// Global is the sale's number for the shard's ith buyer.
func (s Shard) Global(i int) int {
	if !s.Sharded() {
		return i
	}
	return i*s.Count + s.Index
}

// shardPacer is a shard's part of a sale's arrival schedule.
type shardPacer struct {
	p Pacer
	s Shard
}

func (p shardPacer) Due(i int) time.Duration { return p.p.Due(p.s.Global(i)) }

// pacer is the arrival schedule of the shard's own buyers; under a Rush, still a Rush.
func (s Sale) pacer() Pacer {
	p := s.Pacer()
	if _, rush := p.(Rush); rush || !s.Shard.Sharded() {
		return p
	}
	return shardPacer{p, s.Shard}
}

// meetScript stamps shard ARGV[1] arrived in the barrier KEYS[1] at Redis's now (a
// sorted set; a shard polls, so a stamp older than ARGV[5] milliseconds is a shard gone
// while it waited, and no longer counts); the call that finds ARGV[2] shards there sets
// the start KEYS[2], ARGV[3] microseconds after Redis's now, once. It returns the start
// (Redis's clock, in microseconds) and how long ago it was set (0 when this call set
// it), or false while shards are missing. Once the start is set it stamps nothing: a
// shard that comes then is not of this sale.
//
// A shard's index is claimed by the process that stamps it (ARGV[6], in the hash
// KEYS[3]): a second process with the same index while the first's stamp is fresh gets
// {'taken', owner}. Without the claim both would count as one shard and both would buy,
// which the merge could only see as duplicated orders (CI saw an orchestrator's retried
// task of a lost attempt meet the rerun's shards that way).
var meetScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local start = redis.call('GET', KEYS[2])
if start then
  return {start, string.format('%.0f', now + tonumber(ARGV[3]) - tonumber(start))}
end
local ms = math.floor(now / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ms - tonumber(ARGV[5]))
local owner = redis.call('HGET', KEYS[3], ARGV[1])
if owner and owner ~= ARGV[6] and redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return {'taken', owner}
end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[6])
redis.call('PEXPIRE', KEYS[3], ARGV[4])
redis.call('ZADD', KEYS[1], ms, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then return false end
start = string.format('%.0f', now + tonumber(ARGV[3]))
redis.call('SET', KEYS[2], start, 'PX', ARGV[4])
return {start, '0'}
`)

// waiting is how often a shard at the barrier stamps its arrival, and stale how old a
// stamp may be before its shard is taken to have gone.
const (
	waiting = 20 * time.Millisecond
	stale   = 2 * time.Second
)

// barrierKeys are the shards' keys under a sale's prefix: the shards arrived, which
// process claimed each index, the start, the shards finished, and each shard's last
// heartbeat.
type barrierKeys struct{ arrived, owners, start, finished, alive string }

func shardKeys(prefix string) barrierKeys {
	k := prefix + ":shards:"
	return barrierKeys{k + "arrived", k + "owners", k + "start", k + "finished", k + "alive"}
}

func (k barrierKeys) all() []string {
	return []string{k.arrived, k.owners, k.start, k.finished, k.alive}
}

// ErrSaleUnderWay is a shard arriving at a barrier that closed without it: a shard
// started again after it was lost (an orchestrator replacing its task), or a run under
// a name still in use. It cannot join: its buyers would start late, and the others
// already count it lost.
var ErrSaleUnderWay = errors.New("the sale began without this shard")

// ErrShardTaken is a shard arriving at the barrier while another process, still there,
// has its index: two processes were given one index (an orchestrator's retried task of
// an earlier attempt, or one --shard given twice). The one that came second leaves.
var ErrShardTaken = errors.New("another process has this shard's index")

// claimant names this process in the barrier, so that a second process given the same
// index is told which one holds it.
var claimant = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s pid %d", host, os.Getpid())
}()

// meet waits until every shard has arrived and returns the sale's start on this host's
// clock, and on Redis's (microseconds), which names the attempt. Redis's clock is read with the shortest round trip of a few, and its reading
// taken to be halfway through it.
func (s Shard) meet(ctx context.Context, c redis.UniversalClient, prefix string) (time.Time, int64, error) {
	k := shardKeys(prefix)
	keep := (s.join() + time.Minute).Milliseconds()
	deadline := time.Now().Add(s.join())
	// One process may meet more than once (a sale's runs): the claim is this meeting's.
	me := fmt.Sprintf("%s (meeting %x)", claimant, rand.Uint64())
	var at int64
	for first := true; ; first = false {
		v, err := meetScript.Run(ctx, c, []string{k.arrived, k.start, k.owners}, s.Index, s.Count, startMargin.Microseconds(), keep, stale.Milliseconds(), me).StringSlice()
		if err == nil && len(v) == 2 && v[0] == "taken" {
			return time.Time{}, 0, fmt.Errorf("shard %s: %w: %s came first and waits at this run id's barrier (two processes were given index %d: an earlier attempt's task retried by the orchestrator, or one --shard given twice; stop the other, or rerun under a new --run-id)",
				s, ErrShardTaken, v[1], s.Index)
		}
		if err == nil && len(v) == 2 {
			since, _ := strconv.ParseInt(v[1], 10, 64)
			if first && since > 0 {
				ttl, _ := c.PTTL(ctx, k.start).Result()
				return time.Time{}, 0, fmt.Errorf("shard %s: %w %s ago under this run id (a lost shard cannot rejoin; its keys go in %s: rerun the whole sale then, or under a new --run-id)",
					s, ErrSaleUnderWay, (time.Duration(since) * time.Microsecond).Round(time.Millisecond), ttl.Round(time.Second))
			}
			if at, err = strconv.ParseInt(v[0], 10, 64); err != nil {
				return time.Time{}, 0, fmt.Errorf("shard %s: read start: %w", s, err)
			}
			break
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return time.Time{}, 0, fmt.Errorf("shard %s: barrier: %w", s, err)
		}
		if time.Now().After(deadline) {
			n, _ := c.ZCard(ctx, k.arrived).Result()
			return time.Time{}, 0, fmt.Errorf("shard %s: only %d of %d shards arrived within %s (--shard-wait)", s, n, s.Count, s.join())
		}
		select {
		case <-ctx.Done():
			return time.Time{}, 0, ctx.Err()
		case <-time.After(waiting):
		}
	}
	local, redisNow, err := redisClock(ctx, c)
	if err != nil {
		return time.Time{}, 0, fmt.Errorf("shard %s: %w", s, err)
	}
	return local.Add(time.Duration(at-redisNow) * time.Microsecond), at, nil
}

// Heartbeat and Silence decide when a shard is lost: every shard stamps the sale's
// alive set with Redis's clock each Heartbeat while its buyers buy, and the first shard
// takes one silent for Silence, not finished, to be gone (killed, or its node lost).
const (
	Heartbeat = 500 * time.Millisecond
	Silence   = 3 * time.Second
)

// beatScript stamps shard ARGV[1] alive in KEYS[1] at Redis's now, in milliseconds.
var beatScript = redis.NewScript(`
local t = redis.call('TIME')
redis.call('ZADD', KEYS[1], tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// lostScript lists the shards of ARGV[1] that have not finished (KEYS[2]) and whose last
// stamp in KEYS[1] is older than ARGV[2] milliseconds. A shard that has not stamped yet
// is as silent as it has been since the sale's start (KEYS[3], microseconds): it passed
// the barrier with the others, and a slow process may stamp its first beat after a small
// shard's buyers are done (CI saw one declared lost that way, at once).
var lostScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local start = tonumber(redis.call('GET', KEYS[3]) or '0') / 1000
local lost = {}
for i = 0, tonumber(ARGV[1]) - 1 do
  if redis.call('SISMEMBER', KEYS[2], i) == 0 then
    local at = tonumber(redis.call('ZSCORE', KEYS[1], i) or start)
    if now - at > tonumber(ARGV[2]) then table.insert(lost, i) end
  end
end
return lost
`)

// beat stamps the shard alive every Heartbeat until the returned stop is called.
func (s Shard) beat(ctx context.Context, c redis.UniversalClient, prefix string) (stop func()) {
	alive := shardKeys(prefix).alive
	keep := (s.join() + time.Minute).Milliseconds()
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		beatScript.Run(ctx, c, []string{alive}, s.Index, keep)
		wait.Every(ctx, Heartbeat, func() bool {
			beatScript.Run(ctx, c, []string{alive}, s.Index, keep) // a missed stamp is one of several
			return true
		})
	}()
	return func() { cancel(); <-done }
}

// LostShards is the first shard's finding that others stopped before they finished.
type LostShards struct {
	Shard   Shard
	Indexes []int
}

func (e *LostShards) Error() string {
	return fmt.Sprintf("shard %s: shard %s of %d lost (no heartbeat for %s before it finished: killed, or its node lost); the merge marks the sale incomplete",
		e.Shard, joinInts(e.Indexes), e.Shard.Count, Silence)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// redisClock reads Redis's clock (microseconds) with the shortest round trip of five,
// and the moment on this host's monotonic clock it stands for.
func redisClock(ctx context.Context, c redis.UniversalClient) (time.Time, int64, error) {
	var best time.Duration = -1
	var local time.Time
	var at int64
	for range 5 {
		before := time.Now()
		t, err := c.Time(ctx).Result()
		if err != nil {
			return time.Time{}, 0, fmt.Errorf("read redis time: %w", err)
		}
		rtt := time.Since(before)
		if best < 0 || rtt < best {
			best, local, at = rtt, before.Add(rtt/2), t.UnixMicro()
		}
	}
	return local, at, nil
}

// finish marks the shard finished; shard 0 then waits for the others, for at most Join,
// and says which never finished: a *LostShards when every one missing has gone silent.
// The mark and the counts are read even once ctx has ended (a stopped sale still says
// how far it got); ctx's end only ends the wait.
func (s Shard) finish(ctx context.Context, c redis.UniversalClient, prefix string) error {
	k := shardKeys(prefix)
	start, finished, alive := k.start, k.finished, k.alive
	bg := context.WithoutCancel(ctx)
	pipe := c.Pipeline()
	pipe.SAdd(bg, finished, s.Index)
	pipe.PExpire(bg, finished, s.join()+time.Minute)
	if _, err := pipe.Exec(bg); err != nil {
		return fmt.Errorf("shard %s: mark finished: %w", s, err)
	}
	if !s.lead() {
		return nil
	}
	deadline := time.Now().Add(s.join())
	for {
		n, err := c.SCard(bg, finished).Result()
		switch {
		case err != nil:
			return fmt.Errorf("shard %s: wait for the others: %w", s, err)
		case n >= int64(s.Count):
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("shard %s: only %d of %d shards finished within %s of this one", s, n, s.Count, s.join())
		}
		lost, err := lostScript.Run(bg, c, []string{alive, finished, start}, s.Count, Silence.Milliseconds()).Int64Slice()
		if err != nil {
			return fmt.Errorf("shard %s: wait for the others: %w", s, err)
		}
		if len(lost) > 0 && int64(len(lost)) == int64(s.Count)-n {
			e := &LostShards{Shard: s}
			for _, i := range lost {
				e.Indexes = append(e.Indexes, int(i))
			}
			return e
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("shard %s: stopped while %d of %d shards had finished: %w", s, n, s.Count, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s Shard) join() time.Duration {
	if s.Join > 0 {
		return s.Join
	}
	return DefaultJoin
}
