package designfile

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/wait"
	"github.com/stockbench/stockbench/queueimpl"
)

// poll is how often dequeue runs again while the queue is empty: a script cannot block.
const poll = 5 * time.Millisecond

// queue is a queue design made of scripts. Dequeue returns an order's entry ("seq:id")
// or nothing (nil or false) when the queue is empty.
type queue struct {
	name                       string
	c                          redis.UniversalClient
	keys                       queueimpl.Keys
	visibility                 time.Duration
	enqueue, dequeue, ack, len *Script
	// leases are the keys the file names as its leases (lease_keys).
	leases []Value
}

// reaping is a queue whose design hands a silent worker's task on in a reap script.
type reaping struct {
	*queue
	reap *Script
}

func newQueue(name string, e queueimpl.Env, s map[string]*Script, leases []Value) queueimpl.Queue {
	q := &queue{name: name, c: e.Client, keys: e.Keys, visibility: e.Visibility,
		enqueue: s["enqueue"], dequeue: s["dequeue"], ack: s["ack"], len: s["len"], leases: leases}
	if s["reap"] != nil {
		return reaping{q, s["reap"]}
	}
	return q
}

func (q *queue) call() *call { return &call{keys: q.keys, visibility: q.visibility} }

// ClassKeys implements [queueimpl.Classed]: the keys the file names as its leases; a
// design file's tasks have no keys of their own.
func (q *queue) ClassKeys(class faults.KeyClass, _ queueimpl.Order) []string {
	if class != faults.LeaseKeys {
		return nil
	}
	keys := make([]string, len(q.leases))
	for i, v := range q.leases {
		keys[i] = q.call().value(v).(string)
	}
	return keys
}

func (q *queue) fail(err error) error { return fmt.Errorf("%s: %w", q.name, err) }

// Enqueue implements queueimpl.Queue.
func (q *queue) Enqueue(ctx context.Context, o queueimpl.Order) error {
	c := q.call()
	c.order = o
	if _, err := q.enqueue.run(ctx, q.c, c); err != nil {
		return q.fail(err)
	}
	return nil
}

// Dequeue implements queueimpl.Queue, polling the dequeue script until wait is over.
func (q *queue) Dequeue(ctx context.Context, worker string, within time.Duration) (queueimpl.Task, error) {
	c := q.call()
	c.worker = worker
	deadline := time.Now().Add(within)
	for {
		v, err := q.dequeue.run(ctx, q.c, c)
		if err != nil {
			return nil, q.fail(err)
		}
		if v != nil && v != int64(0) {
			e, ok := v.(string)
			if !ok {
				return nil, q.fail(fmt.Errorf("dequeue: want an entry (\"seq:id\") or nil, got %v", v))
			}
			o, err := queueimpl.ParseEntry(e)
			if err != nil {
				return nil, q.fail(fmt.Errorf("dequeue: %w", err))
			}
			return &task{q: q, o: o, worker: worker}, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, queueimpl.ErrEmpty
		}
		if err := wait.Sleep(ctx, min(poll, left)); err != nil {
			return nil, queueimpl.ErrEmpty
		}
	}
}

// Len implements queueimpl.Queue with the len script, whose reply is a count.
func (q *queue) Len(ctx context.Context) (int64, error) {
	v, err := q.len.run(ctx, q.c, q.call())
	if err != nil {
		return 0, q.fail(err)
	}
	n, ok := v.(int64)
	if !ok {
		return 0, q.fail(fmt.Errorf("len: want a count, got %v", v))
	}
	return n, nil
}

// Reap implements queueimpl.Reaper with the reap script, whose reply is a count.
func (q reaping) Reap(ctx context.Context) (int, error) {
	v, err := q.reap.run(ctx, q.c, q.call())
	if err != nil {
		return 0, q.fail(err)
	}
	n, _ := v.(int64)
	return int(n), nil
}

type task struct {
	q      *queue
	o      queueimpl.Order
	worker string
}

func (t *task) Order() queueimpl.Order { return t.o }

// Ack runs the ack script, where the design has one.
func (t *task) Ack(ctx context.Context) error {
	if t.q.ack == nil {
		return nil
	}
	c := t.q.call()
	c.order, c.worker = t.o, t.worker
	if _, err := t.q.ack.run(ctx, t.q.c, c); err != nil {
		return t.q.fail(err)
	}
	return nil
}
