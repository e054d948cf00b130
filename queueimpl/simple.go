package queueimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// List pushes with LPUSH and takes with BRPOP: first in, first out, and a task a worker
// took is gone from Redis.
//
// Guarantee: at most once. A worker that dies with a task loses it.
type List struct {
	Client redis.UniversalClient
	Keys   Keys
}

var _ Queue = List{}

// Enqueue implements [Queue].
func (q List) Enqueue(ctx context.Context, o Order) error {
	if err := q.Client.LPush(ctx, q.Keys.Queue, o.Entry()).Err(); err != nil {
		return fmt.Errorf("list: lpush: %w", err)
	}
	return nil
}

// Dequeue implements [Queue].
func (q List) Dequeue(ctx context.Context, _ string, wait time.Duration) (Task, error) {
	res, err := blocking(ctx, q.Client, wait, "brpop", q.Keys.Queue).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("list: brpop: %w", err)
	}
	o, err := ParseEntry(res[1])
	return noAck{o}, err
}

// Len implements [Queue].
func (q List) Len(ctx context.Context) (int64, error) {
	return q.Client.LLen(ctx, q.Keys.Queue).Result()
}

// ZPopMin adds with ZADD, the score the order's Seq, and takes with BZPOPMIN: lowest
// score first, as a priority queue.
//
// Guarantee: at most once, in Seq order. A worker that dies with a task loses it.
type ZPopMin struct {
	Client redis.UniversalClient
	Keys   Keys
}

var _ Queue = ZPopMin{}

// Enqueue implements [Queue].
func (q ZPopMin) Enqueue(ctx context.Context, o Order) error {
	if err := q.Client.ZAdd(ctx, q.Keys.Queue, redis.Z{Score: float64(o.Seq), Member: o.ID}).Err(); err != nil {
		return fmt.Errorf("zpopmin: zadd: %w", err)
	}
	return nil
}

// Dequeue implements [Queue].
func (q ZPopMin) Dequeue(ctx context.Context, _ string, wait time.Duration) (Task, error) {
	res, err := blocking(ctx, q.Client, wait, "bzpopmin", q.Keys.Queue).Slice()
	if errors.Is(err, redis.Nil) {
		return nil, ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("zpopmin: bzpopmin: %w", err)
	}
	// [key, member, score]; the score is a string in RESP2 and a double in RESP3.
	var score float64
	switch v := res[2].(type) {
	case float64:
		score = v
	case string:
		score, err = strconv.ParseFloat(v, 64)
	default:
		err = fmt.Errorf("unexpected %T", v)
	}
	if err != nil {
		return nil, fmt.Errorf("zpopmin: score: %w", err)
	}
	return noAck{Order{ID: fmt.Sprint(res[1]), Seq: int64(score)}}, nil
}

// Len implements [Queue].
func (q ZPopMin) Len(ctx context.Context) (int64, error) {
	return q.Client.ZCard(ctx, q.Keys.Queue).Result()
}

// scoreID turns a ZRANGE reply into an order.
func scoreID(z redis.Z) Order {
	id, _ := z.Member.(string)
	return Order{ID: id, Seq: int64(z.Score)}
}
