package lockimpl

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed purchase.lua
var purchaseLua string

var purchaseScript = redis.NewScript(purchaseLua)

// Lua buys with one Lua script that checks the stock, decrements it and records the order.
// Redis runs a script without interleaving other commands, so no lock is needed.
type Lua struct {
	Client redis.Scripter
}

var _ Purchaser = Lua{}

// Purchase implements [Purchaser]. The script reads and writes in one step, so there is no
// time to think in between.
func (l Lua) Purchase(ctx context.Context, s Stock, buyer string, _ time.Duration) (int64, error) {
	left, err := purchaseScript.Run(ctx, l.Client, []string{s.Key, s.Orders}, buyer).Int64()
	if err != nil {
		return 0, fmt.Errorf("lua: purchase: %w", err)
	}
	if left < 0 {
		return 0, ErrSoldOut
	}
	return left, nil
}

// PurchaseScript is the Lua source Lua runs, for tools that replay it (make perf hands it
// to redis-benchmark).
func PurchaseScript() string { return purchaseLua }
