package queueimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
)

// ReliableList pushes with LPUSH and takes with BLMOVE into a processing list, noting when
// in a hash; Ack removes the task from both. Reap puts back in line the tasks taken
// longer ago than the visibility timeout.
//
// Guarantee: at least once. A worker that dies loses nothing; one that is only slow may
// see its task done a second time by another worker.
type ReliableList struct {
	Client redis.UniversalClient
	Keys   Keys
	// Visibility is how long a worker may hold a task before Reap hands it on.
	Visibility time.Duration
}

var (
	_ Queue   = ReliableList{}
	_ Reaper  = ReliableList{}
	_ Classed = ReliableList{}
)

// Enqueue implements [Queue].
func (q ReliableList) Enqueue(ctx context.Context, o Order) error {
	if err := q.Client.LPush(ctx, q.Keys.Queue, o.Entry()).Err(); err != nil {
		return fmt.Errorf("reliable-list: lpush: %w", err)
	}
	return nil
}

// Dequeue implements [Queue].
func (q ReliableList) Dequeue(ctx context.Context, _ string, wait time.Duration) (Task, error) {
	e, err := blocking(ctx, q.Client, wait, "blmove", q.Keys.Queue, q.Keys.Processing, "RIGHT", "LEFT").Text()
	if errors.Is(err, redis.Nil) {
		return nil, ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("reliable-list: blmove: %w", err)
	}
	// A worker that dies before this line leaves a task with no time: Reap gives it one.
	if err := stampScript.Run(ctx, q.Client, []string{q.Keys.Processing, q.Keys.Taken}, e).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("reliable-list: stamp: %w", err)
	}
	o, err := ParseEntry(e)
	return &reliableTask{q: q, e: e, o: o}, err
}

// stampScript starts a taken task's clock, in microseconds of Redis's own: only if the
// task is in processing and has no time yet. A stamp that reaches Redis late, once the
// task was handed on and taken again, must not move the new holder's clock back (it
// did: set with the worker's time from before the delay, it had the reaper hand the task
// on a third time under the second worker's lease); a stamp of a task already back in
// line would do the same to its next taker.
var stampScript = redis.NewScript(`
if redis.call('LPOS', KEYS[1], ARGV[1]) then
  local t = redis.call('TIME')
  redis.call('HSETNX', KEYS[2], ARGV[1], t[1] .. string.sub('00000' .. t[2], -6))
end
return 0`)

type reliableTask struct {
	q ReliableList
	e string
	o Order
}

func (t *reliableTask) Order() Order { return t.o }

func (t *reliableTask) Ack(ctx context.Context) error {
	pipe := t.q.Client.TxPipeline()
	pipe.LRem(ctx, t.q.Keys.Processing, 1, t.e)
	pipe.HDel(ctx, t.q.Keys.Taken, t.e)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("reliable-list: ack: %w", err)
	}
	return nil
}

// requeueScript moves one entry from processing back to the consumer's end of the queue,
// if it is still in processing.
var requeueScript = redis.NewScript(`
if redis.call('LREM', KEYS[1], 1, ARGV[1]) > 0 then
  redis.call('RPUSH', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
  return 1
end
return 0`)

// Reap implements [Reaper]. It reads what is overdue, then moves each entry in a script
// of its own (see the design's documentation: reapers in step can each move one).
func (q ReliableList) Reap(ctx context.Context) (int, error) {
	var now *redis.TimeCmd
	var list *redis.StringSliceCmd
	if _, err := q.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		now = p.Time(ctx) // the clock the stamps are in
		list = p.LRange(ctx, q.Keys.Processing, 0, -1)
		return nil
	}); err != nil {
		return 0, fmt.Errorf("reliable-list: reap: %w", err)
	}
	taken := list.Val()
	if len(taken) == 0 {
		return 0, nil
	}
	times, err := q.Client.HMGet(ctx, q.Keys.Taken, taken...).Result()
	if err != nil {
		return 0, fmt.Errorf("reliable-list: reap: %w", err)
	}
	deadline := now.Val().Add(-q.Visibility).UnixMicro()
	n := 0
	for i, e := range taken {
		at, _ := times[i].(string)
		us, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			// No time yet: its worker may be between BLMOVE and its stamp. Start its clock now.
			stampScript.Run(ctx, q.Client, []string{q.Keys.Processing, q.Keys.Taken}, e)
			continue
		}
		if us > deadline {
			continue
		}
		moved, err := requeueScript.Run(ctx, q.Client, []string{q.Keys.Processing, q.Keys.Queue, q.Keys.Taken}, e).Int()
		if err != nil {
			return n, fmt.Errorf("reliable-list: requeue: %w", err)
		}
		n += moved
	}
	return n, nil
}

// ClassKeys implements [Classed]: the take times are its leases; a task has no record
// of its own beside its entry in the lists.
func (q ReliableList) ClassKeys(class faults.KeyClass, _ Order) []string {
	if class == faults.LeaseKeys {
		return []string{q.Keys.Taken}
	}
	return nil
}

// Len implements [Queue].
func (q ReliableList) Len(ctx context.Context) (int64, error) {
	pipe := q.Client.Pipeline()
	a := pipe.LLen(ctx, q.Keys.Queue)
	b := pipe.LLen(ctx, q.Keys.Processing)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, err
	}
	return a.Val() + b.Val(), nil
}
