package scenarios

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/oracle"
)

// The fulfil scripts: KEYS are the stock, the effects log, the refusals log and (for the
// idempotent one) the set of orders done; ARGV[1] is the order id. They return 1 when the
// order took a unit, 0 when none was left, 2 when it was done already. The idempotent
// one is the naive one behind a check that the order is new.
const (
	applyOrder = `
local left = tonumber(redis.call('GET', KEYS[1]) or '0')
if left <= 0 then
  redis.call('RPUSH', KEYS[3], ARGV[1])
  return 0
end
redis.call('DECR', KEYS[1])
redis.call('RPUSH', KEYS[2], ARGV[1])
return 1`
	onlyOnce = `
if redis.call('SADD', KEYS[4], ARGV[1]) == 0 then
  return 2
end`
)

var fulfilScripts = map[Fulfil]*redis.Script{
	Naive:      redis.NewScript(applyOrder),
	Idempotent: redis.NewScript(onlyOnce + applyOrder),
}

// apply applies order id to the stock as f says.
func (f Fulfil) apply(ctx context.Context, c redis.Scripter, k queueKeys, id string) (oracle.TakeResult, error) {
	n, err := fulfilScripts[f].Run(ctx, c, []string{k.stock.Key, k.effects, k.refused, k.done}, id).Int()
	if err != nil {
		return oracle.TakeFailed, fmt.Errorf("fulfil: %w", err)
	}
	return [...]oracle.TakeResult{oracle.TakeRefused, oracle.TakeFulfilled, oracle.TakeRepeat}[n], nil
}
