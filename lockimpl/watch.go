package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// Watch buys optimistically: WATCH the stock, read it, think, then SET and record the
// order in MULTI/EXEC; EXEC fails if anyone wrote the stock in between, and the buyer
// retries as Retry says.
type Watch struct {
	Client redis.UniversalClient
	Retry  Retry
}

var _ Purchaser = Watch{}

// Purchase implements [Purchaser]: Try until a try is not beaten, as Retry says.
func (w Watch) Purchase(ctx context.Context, s Stock, buyer string, think time.Duration) (int64, error) {
	var left int64
	_, err := w.Retry.Do(ctx, func(ctx context.Context) (err error) {
		left, err = w.Try(ctx, s, buyer, think)
		return err
	})
	if err != nil {
		return 0, err
	}
	return left, nil
}

// Try is one optimistic purchase. It returns [ErrNotAcquired] when another buyer wrote
// the stock first, so that a caller with its own retry loop can run the tries.
func (w Watch) Try(ctx context.Context, s Stock, buyer string, think time.Duration) (int64, error) {
	var left int64
	err := w.Client.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Get(ctx, s.Key).Int64()
		if err != nil {
			return fmt.Errorf("watch: get: %w", err)
		}
		if n <= 0 {
			return ErrSoldOut
		}
		if err := wait.Sleep(ctx, think); err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, s.Key, n-1, redis.KeepTTL) // the key's TTL, if any, stays
			p.RPush(ctx, s.Orders, buyer)
			return nil
		})
		left = n - 1
		return err
	}, s.Key)
	if errors.Is(err, redis.TxFailedErr) {
		return 0, ErrNotAcquired // someone wrote first: try again
	}
	return left, err
}
