package queueimpl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// group is the consumer group the workers share.
const group = "workers"

// Stream adds with XADD and takes with XREADGROUP in one consumer group; Ack is XACK.
// Before reading new entries a worker claims, with XAUTOCLAIM, an entry another consumer
// has held longer than the visibility timeout.
//
// Guarantee: at least once, in arrival order for first deliveries. A worker that dies
// loses nothing; one that is only slow may see its task done a second time.
type Stream struct {
	Client redis.Cmdable
	Keys   Keys
	// Visibility is how long an entry may stay pending before another worker claims it.
	Visibility time.Duration
}

var (
	_ Queue   = Stream{}
	_ Churner = Stream{}
)

// Setup creates the stream and its group.
func (q Stream) Setup(ctx context.Context) error {
	err := q.Client.XGroupCreateMkStream(ctx, q.Keys.Queue, group, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("stream: xgroup create: %w", err)
	}
	return nil
}

// Enqueue implements [Queue].
func (q Stream) Enqueue(ctx context.Context, o Order) error {
	err := q.Client.XAdd(ctx, &redis.XAddArgs{Stream: q.Keys.Queue, Values: []any{"id", o.ID}}).Err()
	if err != nil {
		return fmt.Errorf("stream: xadd: %w", err)
	}
	return nil
}

// Dequeue implements [Queue].
func (q Stream) Dequeue(ctx context.Context, worker string, wait time.Duration) (Task, error) {
	claimed, _, err := q.Client.XAutoClaim(ctx, &redis.XAutoClaimArgs{
		Stream: q.Keys.Queue, Group: group, Consumer: worker, MinIdle: q.Visibility, Start: "0-0", Count: 1,
	}).Result()
	if err != nil {
		return nil, fmt.Errorf("stream: xautoclaim: %w", err)
	}
	if len(claimed) > 0 {
		return q.task(claimed[0])
	}
	res, err := q.Client.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: group, Consumer: worker, Streams: []string{q.Keys.Queue, ">"}, Count: 1, Block: wait,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ErrEmpty
	}
	if err != nil {
		return nil, fmt.Errorf("stream: xreadgroup: %w", err)
	}
	if len(res) == 0 || len(res[0].Messages) == 0 {
		return nil, ErrEmpty
	}
	return q.task(res[0].Messages[0])
}

func (q Stream) task(m redis.XMessage) (Task, error) {
	id, _ := m.Values["id"].(string)
	seq, err := entrySeq(m.ID)
	if err != nil {
		return nil, err
	}
	return streamTask{q: q, id: m.ID, o: Order{ID: id, Seq: seq}}, nil
}

// entrySeq orders stream entry ids "ms-n" as one number.
func entrySeq(id string) (int64, error) {
	ms, n, _ := strings.Cut(id, "-")
	a, err1 := strconv.ParseInt(ms, 10, 64)
	b, err2 := strconv.ParseInt(n, 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("stream: entry id %q: %w", id, err)
	}
	return a*1_000_000 + b, nil
}

type streamTask struct {
	q  Stream
	id string
	o  Order
}

func (t streamTask) Order() Order { return t.o }

func (t streamTask) Ack(ctx context.Context) error {
	if err := t.q.Client.XAck(ctx, t.q.Keys.Queue, group, t.id).Err(); err != nil {
		return fmt.Errorf("stream: xack: %w", err)
	}
	return nil
}

// DeleteConsumer implements [Churner]: XGROUP DELCONSUMER, which drops the consumer's
// pending entries with it: nothing claims them again.
func (q Stream) DeleteConsumer(ctx context.Context, worker string) (int64, error) {
	n, err := q.Client.XGroupDelConsumer(ctx, q.Keys.Queue, group, worker).Result()
	if err != nil {
		return 0, fmt.Errorf("stream: xgroup delconsumer: %w", err)
	}
	return n, nil
}

// Len implements [Queue]: entries not yet delivered (the group's lag) plus pending ones.
func (q Stream) Len(ctx context.Context) (int64, error) {
	groups, err := q.Client.XInfoGroups(ctx, q.Keys.Queue).Result()
	if err != nil {
		return 0, fmt.Errorf("stream: xinfo groups: %w", err)
	}
	for _, g := range groups {
		if g.Name != group {
			continue
		}
		lag := g.Lag
		if lag < 0 { // go-redis's -1 for Redis's nil
			if lag, err = q.undelivered(ctx, g.LastDeliveredID); err != nil {
				return 0, err
			}
		}
		return lag + g.Pending, nil
	}
	return 0, nil
}

// maxCounted is how many undelivered entries undelivered counts before it gives up.
const maxCounted = 10_000

// errLagUnknown is a lag Redis does not know and too long to count.
var errLagUnknown = errors.New("stream: lag unknown and more than 10000 entries")

// undelivered counts the entries after the group's last delivered one. Redis no longer
// knows that lag once the stream is loaded back from an AOF or RDB (XINFO GROUPS then
// answers entries-read and lag as nil): read as a lag of -1, a group with one task
// pending and more waiting would look empty, and a sale would end with orders undone.
// The count is bounded, as a sample taken every 50ms must be: past maxCounted, Len
// fails, which reads as not empty.
func (q Stream) undelivered(ctx context.Context, last string) (int64, error) {
	const page = 1000
	var n int64
	for start := "(" + last; n < maxCounted; {
		ms, err := q.Client.XRangeN(ctx, q.Keys.Queue, start, "+", page).Result()
		if err != nil {
			return 0, fmt.Errorf("stream: xrange: %w", err)
		}
		n += int64(len(ms))
		if len(ms) < page {
			return n, nil
		}
		start = "(" + ms[len(ms)-1].ID
	}
	return 0, errLagUnknown
}
