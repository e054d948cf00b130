package scenarios

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/oracle"
)

// The witness: a holder counts itself in at the stock store on entering the critical
// section and out on leaving it, and the store keeps the most it saw inside at once and
// how many came in while another was inside. Hosts' clocks cannot say whether two holds
// on different hosts overlapped; the store, which both reach, can. The marks lie inside
// the hold the ledger records, so an overlap they show really happened.

// witnessKeys are the witness's keys under the sale's prefix: holders inside now, the
// most at once, and the entries made while another holder was inside.
func witnessKeys(prefix string) []string {
	return []string{prefix + ":witness", prefix + ":witness:max", prefix + ":witness:overlaps"}
}

var witnessInScript = redis.NewScript(`
local n = redis.call('INCR', KEYS[1])
if n > 1 then redis.call('INCR', KEYS[3]) end
if n > tonumber(redis.call('GET', KEYS[2]) or '0') then redis.call('SET', KEYS[2], n) end
return n
`)

// witnessIn counts a holder of application a in; false when there is no witness or the
// mark failed (counted as an error), and then witnessOut does nothing.
func (ls *lockSale) witnessIn(ctx context.Context, a *app) bool {
	if !ls.witnessed() {
		return false
	}
	if err := witnessInScript.Run(ctx, a.r.Stock, witnessKeys(ls.Prefix)).Err(); err != nil {
		ls.t.failed(fmt.Errorf("flash-sale: witness in: %w", err))
		return false
	}
	return true
}

// witnessOut counts the holder out, also for one that died holding the lock (the hold
// ended when it died), and also when the sale is being stopped.
func (ls *lockSale) witnessOut(ctx context.Context, a *app, in bool) {
	if !in {
		return
	}
	if err := a.r.Stock.Decr(context.WithoutCancel(ctx), witnessKeys(ls.Prefix)[0]).Err(); err != nil {
		ls.t.failed(fmt.Errorf("flash-sale: witness out: %w", err))
	}
}

// witnessed reports whether holders mark the witness: when asked, and always in a shard.
func (ls *lockSale) witnessed() bool {
	return (ls.Witness || ls.Shard.Sharded()) && ls.apps[0].locker != nil
}

// readWitness reads what the witness saw.
func readWitness(ctx context.Context, c redis.UniversalClient, prefix string) (*oracle.Witness, error) {
	keys := witnessKeys(prefix)
	vals, err := c.MGet(ctx, keys[1], keys[2]).Result()
	if err != nil {
		return nil, fmt.Errorf("flash-sale: read witness: %w", err)
	}
	var w oracle.Witness
	for i, dst := range []*int64{&w.Max, &w.Overlaps} {
		if vals[i] == nil {
			continue // no holder came in at all, or none while another was inside
		}
		s, _ := vals[i].(string)
		if *dst, err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, fmt.Errorf("flash-sale: read witness: %w", err)
		}
	}
	return &w, nil
}
