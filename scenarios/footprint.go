package scenarios

import (
	"fmt"
	"math"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/host"
	"github.com/stockbench/stockbench/lockimpl"
)

// What a sale holds in memory, per thing it has many of, as measured on the project's
// machine (see the README's performance table) and rounded up. Redis's share counts only
// when it runs on the same machine.
const (
	// waitingBuyer: a lock design's buyer, its ledger entry, its deadline, its place among
	// the waiters and in the executor's queue, and what the oracles derive from it. A
	// million waiting buyers of set-nx-ex took 186 MB of RSS, Redis elsewhere.
	waitingBuyer = 256
	// queuedBuyer: a one-call design's buyer, an index and its ledger entry. A million
	// lua buyers took 167 MB.
	queuedBuyer = 176
	// queueBuyer: a queued order: its ledger entry, the settled set, the oracles' maps
	// and the logs read back from Redis.
	queueBuyer = 512
	// queueWorker: a queue worker's goroutine, whose stack grows to about 8 KB inside
	// go-redis, and its record of takes.
	queueWorker = 8192
	// linearBuyer: porcupine's history of one purchase, when it is checked.
	linearBuyer = 512
	// conn: one pooled connection, go-redis's 32 KB read and write buffers.
	conn = 64 << 10
	// redisOrder, redisTask and redisConn: Redis's own share of an order recorded (a list
	// entry takes about 5 B), of a queued task with its logs and idempotence set (a
	// stream entry about 15 B, a set member about 60 B), and of a client connection.
	redisOrder = 32
	redisTask  = 128
	redisConn  = 24 << 10
	// saleBase: histograms, recorders, plots and the runtime itself.
	saleBase = 64 << 20
)

// Footprint is an estimate of the memory a sale holds at its peak, to refuse one the
// machine cannot hold before anything starts.
type Footprint struct {
	// Bytes is the whole estimate.
	Bytes int64
	// Most names what takes most of it, and Setting the sale's setting that changes it
	// (a field of Sale or QueueSale, in lower case: "buyers", "workers", "conns").
	Most, Setting string
	// Conns is how many connections the sale opens: each is a file descriptor.
	Conns int
}

// part is one share of a footprint.
type part struct {
	n         int
	each      int64
	what      string
	setting   string
	isConns   bool
	redisEach int64
}

func footprintOf(redisHere bool, parts ...part) Footprint {
	f := Footprint{Bytes: saleBase}
	var most int64
	for _, p := range parts {
		each := p.each
		if redisHere {
			each += p.redisEach
		}
		b := satMul(int64(p.n), each)
		f.Bytes = min(f.Bytes+b, math.MaxInt64/2) // a count too large for the machine stays too large
		if p.isConns {
			f.Conns = min(f.Conns+p.n, math.MaxInt32)
		}
		if b > most && p.setting != "" {
			most = b
			f.Most = fmt.Sprintf("%s %s, about %s each", host.Count(p.n), p.what, host.Size(each))
			f.Setting = p.setting
		}
	}
	return f
}

// satMul is n·each, or the largest int64 when that overflows.
func satMul(n, each int64) int64 {
	if n > 0 && each > 0 && n > math.MaxInt64/each {
		return math.MaxInt64 / 2
	}
	return n * each
}

// Footprint estimates what s holds at its peak with impl, Redis running on this machine
// or not. Every buyer of a lock design may wait at once, under an open load as under a
// closed one: a stalled server piles arrivals up.
func (s FlashSale) Footprint(impl lockimpl.Impl, redisHere bool) Footprint {
	s = s.WithDefaults()
	buyer := part{n: s.Buyers, each: waitingBuyer, what: "buyers waiting at once", setting: "buyers"}
	if oneCallDesign(impl) {
		buyer.each, buyer.what = queuedBuyer, "queued buyers"
	}
	if s.CheckLinearizable {
		buyer.each += linearBuyer
	}
	conns := part{n: int(satMul(int64(s.Conns)*int64(s.Apps), int64(1+impl.LockNodes()))), each: conn, what: "connections", setting: "conns", isConns: true, redisEach: redisConn}
	orders := part{n: int(min(int64(s.Buyers), s.Stock)), redisEach: redisOrder} // in Redis, one per unit sold
	return footprintOf(redisHere, buyer, conns, orders)
}

// Footprint estimates what s holds at its peak, Redis running on this machine or not.
func (s QueueSale) Footprint(redisHere bool) Footprint {
	s = s.WithDefaults()
	return footprintOf(redisHere,
		part{n: s.Buyers, each: queueBuyer, what: "orders", setting: "buyers", redisEach: redisTask},
		part{n: s.Workers, each: queueWorker, what: "workers", setting: "workers"},
		part{n: int(satMul(int64(s.Conns), 2)), each: conn, what: "connections", setting: "conns", isConns: true, redisEach: redisConn})
}

// oneCallDesign reports whether impl's buyers are queued rather than goroutines (see
// lockSale.oneCall). The design is built without servers to be asked; one whose
// constructor needs them counts as a lock design, the larger estimate.
func oneCallDesign(impl lockimpl.Impl) (one bool) {
	if impl.NewPurchaser == nil {
		return false
	}
	defer func() {
		if recover() != nil {
			one = false
		}
	}()
	p := impl.NewPurchaser(lockimpl.Env{Locks: make([]redis.UniversalClient, impl.LockNodes())})
	_, retries := p.(tryer)
	return !retries
}
