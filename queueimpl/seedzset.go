package queueimpl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/lockimpl"
)

// SeedZSet is the classic article's queue: ZADD to enqueue; to take, hold the seed lock
// (lockimpl.SeedSetNX), ZRANGE the first member, ZREM it, and release. ZREM's reply is
// not checked, as in the original.
//
// Guarantee: none beyond the seed lock's. Its steal race lets two workers read the same
// first member and both take it (a duplicate); a worker that dies with a task loses it.
type SeedZSet struct {
	Client redis.UniversalClient
	Keys   Keys
	// LockTTL is the seed lock's TTL argument. Default: 1s.
	LockTTL time.Duration
}

var _ Queue = SeedZSet{}

// Enqueue implements [Queue].
func (q SeedZSet) Enqueue(ctx context.Context, o Order) error {
	if err := q.Client.ZAdd(ctx, q.Keys.Queue, redis.Z{Score: float64(o.Seq), Member: o.ID}).Err(); err != nil {
		return fmt.Errorf("seed-zset: zadd: %w", err)
	}
	return nil
}

// Dequeue implements [Queue]: it polls the seed lock for up to wait.
func (q SeedZSet) Dequeue(ctx context.Context, _ string, wait time.Duration) (Task, error) {
	ttl := q.LockTTL
	if ttl == 0 {
		ttl = time.Second
	}
	retry := lockimpl.Retry{Interval: 5 * time.Millisecond, Timeout: wait}
	lease, _, err := retry.Acquire(ctx, lockimpl.SeedSetNX{Client: q.Client}, q.Keys.Lock, ttl)
	if errors.Is(err, lockimpl.ErrNotAcquired) {
		return nil, ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("seed-zset: %w", err)
	}
	defer lease.Release(context.WithoutCancel(ctx))
	first, err := q.Client.ZRangeWithScores(ctx, q.Keys.Queue, 0, 0).Result()
	if err != nil {
		return nil, fmt.Errorf("seed-zset: zrange: %w", err)
	}
	if len(first) == 0 {
		return nil, ErrEmpty
	}
	q.Client.ZRem(ctx, q.Keys.Queue, first[0].Member)
	return noAck{scoreID(first[0])}, nil
}

// Len implements [Queue].
func (q SeedZSet) Len(ctx context.Context) (int64, error) {
	return q.Client.ZCard(ctx, q.Keys.Queue).Result()
}
