// Package asynq puts hibiken/asynq, a queue library many Go teams run, under a sale as
// the queue design "asynq": importing it registers the design. It lives apart from
// package queueimpl so that what imports the Queue interface does not
// compile asynq, protobuf and cron.
package asynq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"

	"github.com/redis/go-redis/v9"
	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
)

// Asynq is hibiken/asynq, a queue library many Go teams run, with its own enqueue, its
// own servers and its own lease: each worker is an asynq.Server of concurrency 1 with a
// connection of its own, whose handler hands the task to the worker and returns when the
// worker acks. asynq leases a task to the server that took it for 30 s, extended by its
// heartbeats while the handler runs; a recoverer, once a minute, gives back the tasks of
// expired leases.
//
// Guarantee: at least once, eventually. A worker that dies (its server's connection cut,
// its heartbeats with it) leaves its task leased for 30 s; asynq's recoverer, run by
// each server as it starts and once a minute after, gives back a task whose lease ran
// out 30 s before, so that the server started in the dead one's place gives it back a
// minute after the death (with asynq's default of 25 retries, each at once here). Within
// a sale shorter than that (any but one with --visibility 30s or more, whose quiet period
// waits a minute) it is lost. A worker that only stalls keeps its lease (its server's
// heartbeats go on), so nothing is done twice. The recoverer finds tasks only in the
// lease set: a task whose lease or hash was evicted (evict-lease, evict-job) is never
// given back (hibiken/asynq#1144).
type Asynq struct {
	Client redis.UniversalClient

	mu      sync.Mutex
	qname   string
	enq     *asynq.Client
	insp    *asynq.Inspector
	workers map[string]*asynqWorker
}

var (
	_ queueimpl.Queue   = (*Asynq)(nil)
	_ queueimpl.Starter = (*Asynq)(nil)
	_ queueimpl.Classed = (*Asynq)(nil)
)

// asynqWorker is one worker's asynq server and the tasks its handler hands over.
type asynqWorker struct {
	srv   *asynq.Server
	conn  redis.UniversalClient
	cut   *cut
	tasks chan *asynqTask
	// gone is closed once a killed worker's server has shut down.
	gone chan struct{}
}

// cut fails every command of a connection once set: a dead process's connection. (Closing
// the client instead makes asynq's subscriber read a closed channel and panic.)
type cut struct{ dead atomic.Bool }

func (c *cut) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *cut) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if c.dead.Load() {
			cmd.SetErr(errKilled)
			return errKilled
		}
		return next(ctx, cmd)
	}
}

func (c *cut) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if c.dead.Load() {
			for _, cmd := range cmds {
				cmd.SetErr(errKilled)
			}
			return errKilled
		}
		return next(ctx, cmds)
	}
}

// asynqTask is a task a handler holds until its worker acks it or dies.
type asynqTask struct {
	o    queueimpl.Order
	w    *asynqWorker
	done chan error
}

// asynqType is the type the sale's tasks carry.
func init() {
	queueimpl.Register(queueimpl.Impl{
		Name:      "asynq",
		Summary:   "hibiken/asynq: its client's enqueue, an asynq.Server of concurrency 1 per worker, its 30 s lease kept by heartbeats, its recoverer",
		Guarantee: "at least once, eventually: a dead worker's task comes back after its 30 s lease",
		New:       func(e queueimpl.Env) queueimpl.Queue { return &Asynq{Client: e.Client} },
		Own:       true,
		// asynq gives a dead worker's task back only a minute after its death, past a
		// sale's quiet end unless its visibility timeout is 30 s or more: within the
		// sale that is a loss, as with an at-most-once design. A stalled worker's server
		// goes on renewing the lease, so nothing is done twice. A dead worker's task
		// whose lease or hash was evicted is lost for good (the record's asynq-1144).
		Documented: queueimpl.AtMostOnce.With([]oracle.Class{oracle.ClassLost}, faults.EvictLease, faults.EvictJob),
	})
}

const asynqType = "stockbench:order"

// Start implements [queueimpl.Starter]: the queue is named after the sale's keys.
func (q *Asynq) Start(_ context.Context, s queueimpl.Sale) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	// asynq puts the name in its own hash tag: the sale's braces go.
	q.qname = strings.NewReplacer("{", "", "}", "", ":", "-").Replace(s.Keys.Queue)
	q.enq = asynq.NewClientFromRedisClient(q.Client)
	q.insp = asynq.NewInspectorFromRedisClient(q.Client)
	q.workers = make(map[string]*asynqWorker)
	return nil
}

// Stop implements [queueimpl.Starter]: it shuts every live worker's server down and deletes the
// queue's keys.
func (q *Asynq) Stop() string {
	q.mu.Lock()
	workers := q.workers
	q.workers = nil
	q.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Go(func() {
			if w.cut.dead.Load() {
				<-w.gone // Freeze shuts it down
				return
			}
			w.srv.Shutdown()
			w.conn.Close()
		})
	}
	wg.Wait()
	if q.insp != nil {
		q.forget(context.Background())
	}
	return ""
}

// forget deletes every key asynq wrote for the sale's queue, under the queue's own hash
// tag (its tasks, leases, stats), and the queue's name from asynq's list of queues:
// DeleteQueue refuses a queue with a task leased to a dead worker.
func (q *Asynq) forget(ctx context.Context) {
	pattern := "asynq:{" + q.qname + "}:*"
	var keys []string
	iter := q.Client.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		q.Client.Del(ctx, keys[:n]...)
		keys = keys[n:]
	}
	q.Client.SRem(ctx, "asynq:queues", q.qname)
}

// Enqueue implements [queueimpl.Queue].
func (q *Asynq) Enqueue(ctx context.Context, o queueimpl.Order) error {
	t := asynq.NewTask(asynqType, []byte(o.Entry()))
	if _, err := q.enq.EnqueueContext(ctx, t, asynq.Queue(q.qname), asynq.TaskID(o.ID)); err != nil {
		return fmt.Errorf("asynq: enqueue: %w", err)
	}
	return nil
}

// Dequeue implements [queueimpl.Queue]: the worker's server, started on its first call, hands
// over the next task its handler took.
func (q *Asynq) Dequeue(ctx context.Context, worker string, wait time.Duration) (queueimpl.Task, error) {
	w, err := q.worker(worker)
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case t := <-w.tasks:
		return t, nil
	case <-timer.C:
		return nil, queueimpl.ErrEmpty
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// worker returns the named worker's server, starting it if need be.
func (q *Asynq) worker(name string) (*asynqWorker, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.workers == nil {
		return nil, errors.New("asynq: the sale has not started")
	}
	if w, ok := q.workers[name]; ok {
		return w, nil
	}
	w := &asynqWorker{conn: another(q.Client), cut: new(cut), tasks: make(chan *asynqTask), gone: make(chan struct{})}
	w.conn.AddHook(w.cut)
	w.srv = asynq.NewServerFromRedisClient(w.conn, asynq.Config{
		Concurrency: 1, Queues: map[string]int{q.qname: 1},
		// Polled often: a sale lasts seconds, and asynq's default is a second.
		TaskCheckInterval: 10 * time.Millisecond, DelayedTaskCheckInterval: 100 * time.Millisecond,
		ShutdownTimeout: time.Second, LogLevel: asynq.FatalLevel,
		// A task the recoverer gives back is due at once: asynq's back-off starts at
		// 15 s, and a sale that waits for the recoverer is long enough already.
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 0 },
	})
	if err := w.srv.Start(asynq.HandlerFunc(w.handle)); err != nil {
		w.conn.Close()
		return nil, fmt.Errorf("asynq: start a server: %w", err)
	}
	q.workers[name] = w
	return w, nil
}

// handle is the server's handler: it hands the task to the worker and holds it until
// the worker acks (or dies, or the server shuts down).
func (w *asynqWorker) handle(ctx context.Context, t *asynq.Task) error {
	o, err := queueimpl.ParseEntry(string(t.Payload()))
	if err != nil {
		return err
	}
	at := &asynqTask{o: o, w: w, done: make(chan error, 1)}
	select {
	case w.tasks <- at:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-at.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// another is a client with c's options: the connection of one worker's server.
func another(c redis.UniversalClient) redis.UniversalClient {
	switch c := c.(type) {
	case *redis.Client:
		o := *c.Options()
		o.PoolSize, o.MaxActiveConns = 4, 4
		return redis.NewClient(&o)
	case *redis.ClusterClient:
		o := *c.Options()
		return redis.NewClusterClient(&o)
	}
	return c
}

func (t *asynqTask) Order() queueimpl.Order { return t.o }

// Ack implements [queueimpl.Task]: the handler returns nil, and asynq marks the task done.
func (t *asynqTask) Ack(context.Context) error {
	t.done <- nil
	return nil
}

// errKilled is what a killed worker's handler returns, on a connection already closed.
var errKilled = errors.New("asynq: worker killed")

// Freeze is what a fault does to the worker holding t: killed (until zero), its
// server's connection is cut first, so that neither its heartbeats nor its shutdown
// reach Redis, as when its process dies; stalled, its handler just holds the task while
// its server's heartbeats go on, as asynq's do for a slow handler.
func (t *asynqTask) Freeze(until time.Time) {
	if !until.IsZero() {
		return
	}
	t.w.cut.dead.Store(true)
	t.done <- errKilled
	go func() {
		t.w.srv.Shutdown()
		t.w.conn.Close()
		close(t.w.gone)
	}()
}

// ClassKeys implements [queueimpl.Classed]: the queue's lease set, where asynq's
// recoverer looks for tasks whose workers went silent, and each task's hash, which holds
// the task itself (keys as asynq's internal/base names them).
func (q *Asynq) ClassKeys(class faults.KeyClass, o queueimpl.Order) []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch class {
	case faults.LeaseKeys:
		return []string{"asynq:{" + q.qname + "}:lease"}
	case faults.JobKeys:
		return []string{"asynq:{" + q.qname + "}:t:" + o.ID}
	}
	return nil
}

// Len implements [queueimpl.Queue]: the tasks waiting, taken and not done, or due again.
func (q *Asynq) Len(context.Context) (int64, error) {
	info, err := q.insp.GetQueueInfo(q.qname)
	if errors.Is(err, asynq.ErrQueueNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("asynq: queue info: %w", err)
	}
	return int64(info.Pending + info.Active + info.Scheduled + info.Retry), nil
}
