package scenarios

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stockbench/stockbench/oracle"
)

// BenchmarkSettle is a buyer's bookkeeping for one purchase: the ledger entry, the
// latency, the progress counters. It must not allocate.
func BenchmarkSettle(b *testing.B) {
	ls := &lockSale{FlashSale: FlashSale{Sale: Sale{Buyers: 1 << 16}}, ledger: oracle.NewLedger(1<<16, 1<<16), t: newTally(Sale{})}
	ls.t0 = time.Now()
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ls.settle(ctx, i&(1<<16-1), ls.t0, 1, nil)
	}
}

// BenchmarkExecutorDo is the hand-over of one Redis call to the executor and back: it
// allocates nothing of its own (the call's closure is the caller's).
func BenchmarkExecutorDo(b *testing.B) {
	x := newExecutor(4, 64, nil, nil)
	defer x.stop()
	ctx := context.Background()
	n := 0
	fn := func() { n++ }
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			x.do(ctx, fn)
		}
	})
}

func TestHotPathsDoNotAllocate(t *testing.T) {
	ls := &lockSale{FlashSale: FlashSale{Sale: Sale{Buyers: 1024}}, ledger: oracle.NewLedger(1024, 1024), t: newTally(Sale{})}
	ls.t0 = time.Now()
	ctx := context.Background()
	i := 0
	if n := testing.AllocsPerRun(1000, func() { ls.settle(ctx, i%1024, ls.t0, 1, nil); i++ }); n != 0 {
		t.Errorf("settle allocates %v per purchase", n)
	}
	x := newExecutor(2, 2, nil, nil)
	defer x.stop()
	fn := func() {}
	if n := testing.AllocsPerRun(1000, func() { x.do(ctx, fn) }); n != 0 {
		t.Errorf("executor.do allocates %v per call", n)
	}
}

// BenchmarkQueuedBuyer is one step of a queued buyer (a one-call design), with a
// purchase that costs nothing: the harness's own cost per purchase around the Redis
// call. Its only garbage is the buyer's id, a few bytes the order records.
func BenchmarkQueuedBuyer(b *testing.B) {
	p := &slowPurchaser{}
	p.left.Store(math.MaxInt64)
	ls := queuedSale(b, FlashSale{Sale: Sale{Buyers: 1 << 16, Stock: 1 << 16}}, p)
	ls.t0, ls.t = time.Now(), newTally(ls.Sale)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ls.buyQueued(ctx, ls.apps[0], i&(1<<16-1), ls.t0)
	}
}
