// Command asynq-queue runs hibiken/asynq behind stockbench's adapter protocol as a queue,
// at whatever version this module's go.mod requires (--queue-go
// github.com/hibiken/asynq@VERSION builds it at another): asynq's own Client enqueues,
// and each process is a worker as asynq runs one, an asynq.Server of concurrency 1 whose
// handler hands the task to the harness's worker and returns when that worker acks.
// asynq leases the task to the server for 30 s, renewed by the server's heartbeats while
// the handler runs; its recoverer gives a task whose lease ran out back to the queue.
//
// The process handles its signals as asynq's Server.Run does (signals_unix.go:
// "SIGTERM and SIGINT will signal the process to exit. SIGTSTP will signal the process
// to stop processing new tasks."): Stop, then Shutdown, which waits ShutdownTimeout for
// the task in hand and then pushes it back to Redis, and the process exits. Run itself
// cannot serve sale after sale (it returns only on a signal), so the same steps are
// here around Start. A SIGKILL or a SIGSTOP stops the server's heartbeats with the rest
// of the process: its lease runs out.
//
// Settings are asynq's defaults but two. ShutdownTimeout is asynq's default 8 s in the
// share it has of Kubernetes' default 30 s grace, applied to the sale's grace
// (term_grace_ms), so that the shutdown fits inside the deploy's SIGKILL as a team
// sizes it (--shutdown-timeout D sets it). A task the recoverer gives back is due at
// once (RetryDelayFunc 0) where asynq backs off 15 s and more: the sale waits for the
// recoverer's minute already.
//
// A dead worker's task comes back by asynq's own clock, not the sale's visibility
// timeout: its lease runs 30 s past the last heartbeat, the recoverer takes only leases
// that ran out 30 s before ("to accommodate certain amount of clock skew",
// recoverer.go), and runs once a minute; the task it gives back waits for the
// forwarder (every 5 s) and the next poll (every second). hello's answer says so
// (redelivery_ms, 126 s; --redelivery D sets another, 0 none), and the sale waits that
// long before it calls a task lost.
//
// Every key asynq writes for the sale is under the queue's own hash tag,
// asynq:{QUEUE}:..., QUEUE the sale's queue key without its braces; the process deletes
// them, and the queue's name from asynq:queues, when the sale ends (bye or stdin's end).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/adapters/go/protocol"
)

// orderType is the type the sale's tasks carry.
const orderType = "stockbench:order"

// asynq's default ShutdownTimeout (server.go), and Kubernetes' default grace it sits in.
const (
	asynqShutdown = 8 * time.Second
	k8sGrace      = 30 * time.Second
)

// lease is how long asynq leases a task to its server, renewed by the server's
// heartbeats; redelivery the longest asynq takes to hand a dead worker's task on at its
// defaults: the lease, the recoverer's cutoff, its interval, the forwarder's, the poll's.
const (
	lease      = 30 * time.Second
	redelivery = lease + 30*time.Second + time.Minute + 5*time.Second + time.Second
)

func main() {
	timeout := flag.Duration("shutdown-timeout", 0, "asynq's ShutdownTimeout (default: 8/30 of the deploy's grace, asynq's default share of Kubernetes' 30 s)")
	redeliver := flag.Duration("redelivery", redelivery, "the longest asynq takes to hand a dead worker's task on, which the sale waits for (0: the visibility timeout's wait)")
	flag.Parse()
	var (
		mu  sync.Mutex
		cur *worker // the sale's worker, for the signal handler
	)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGTSTP)
	go func() {
		for sig := range sigs {
			mu.Lock()
			w := cur
			mu.Unlock()
			switch {
			case sig == syscall.SIGTSTP && w != nil:
				w.srv.Stop()
				continue
			case sig == syscall.SIGTSTP:
				continue
			case w == nil:
				os.Exit(0) // between sales: nothing to drain
			}
			w.srv.Stop()
			w.srv.Shutdown()
			os.Exit(0)
		}
	}()
	protocol.Main(func(h protocol.Hello) (protocol.Handler, []string, map[string][]string, error) {
		w, err := start(h, *timeout)
		if err != nil {
			return nil, nil, nil, err
		}
		mu.Lock()
		cur = w
		mu.Unlock()
		if *redeliver > 0 {
			h.Answer("redelivery_ms", redeliver.Milliseconds())
		}
		h.Defer(func() {
			mu.Lock()
			cur = nil
			mu.Unlock()
			w.end()
		})
		return w.handle, []string{"queue", "ack", "sentinel"}, documented(time.Duration(h.VisibilityMs)*time.Millisecond, *redeliver > 0), nil
	})
}

// worker is one sale's asynq client, server and inspector, and the task its handler
// holds for the harness's worker.
type worker struct {
	c     redis.UniversalClient
	qname string
	enq   *asynq.Client
	insp  *asynq.Inspector
	srv   *asynq.Server
	tasks chan *task
	quit  chan struct{} // closed as the sale ends: a handler still holding a task lets go
	mu    sync.Mutex
	held  map[string]*task
}

// task is a task the handler holds until the harness's worker acks it.
type task struct {
	id, order string
	seq       int64
	done      chan struct{}
}

// payload is a task's body: the order and its place in line.
type payload struct {
	Order string `json:"order"`
	Seq   int64  `json:"seq"`
}

func start(h protocol.Hello, timeout time.Duration) (*worker, error) {
	queue, _ := h.Keys["queue"].(string)
	if queue == "" {
		return nil, errors.New("hello names no queue key")
	}
	c := protocol.Client(h.Redis)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	err := c.Ping(ctx).Err()
	cancel()
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if timeout <= 0 {
		// in whole milliseconds: a grace in nanoseconds times 8 s in nanoseconds overflows
		timeout = time.Duration(h.TermGraceMs*asynqShutdown.Milliseconds()/k8sGrace.Milliseconds()) * time.Millisecond
		if timeout <= 0 {
			timeout = asynqShutdown
		}
	}
	w := &worker{c: c, qname: strings.NewReplacer("{", "", "}", "", ":", "-").Replace(queue),
		enq: asynq.NewClientFromRedisClient(c), insp: asynq.NewInspectorFromRedisClient(c),
		tasks: make(chan *task), quit: make(chan struct{}), held: map[string]*task{}}
	w.srv = asynq.NewServerFromRedisClient(c, asynq.Config{
		Concurrency: 1, Queues: map[string]int{w.qname: 1}, ShutdownTimeout: timeout, LogLevel: asynq.ErrorLevel,
		RetryDelayFunc: func(int, error, *asynq.Task) time.Duration { return 0 },
	})
	if err := w.srv.Start(asynq.HandlerFunc(w.perform)); err != nil {
		c.Close()
		return nil, fmt.Errorf("start asynq's server: %w", err)
	}
	return w, nil
}

// perform is the server's handler: the task goes to the harness's worker that asks
// next, and the handler returns once that worker acks (or the server aborts it).
func (w *worker) perform(ctx context.Context, t *asynq.Task) error {
	var p payload
	if err := json.Unmarshal(t.Payload(), &p); err != nil {
		return fmt.Errorf("read task: %w", err)
	}
	id, _ := asynq.GetTaskID(ctx)
	tk := &task{id: id, order: p.Order, seq: p.Seq, done: make(chan struct{})}
	select {
	case w.tasks <- tk:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.quit:
		return errors.New("the sale is over")
	}
	select {
	case <-tk.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-w.quit:
		return errors.New("the sale is over")
	}
}

func (w *worker) handle(ctx context.Context, req protocol.Request) (protocol.Reply, error) {
	r := req
	switch req.Op {
	case "enqueue":
		body, _ := json.Marshal(payload{Order: r.Order, Seq: r.Seq})
		if _, err := w.enq.EnqueueContext(ctx, asynq.NewTask(orderType, body), asynq.Queue(w.qname), asynq.TaskID(r.Order)); err != nil {
			return nil, fmt.Errorf("enqueue: %w", err)
		}
		return protocol.Reply{"ok": true}, nil
	case "dequeue":
		timer := time.NewTimer(time.Duration(r.WaitMs) * time.Millisecond)
		defer timer.Stop()
		select {
		case tk := <-w.tasks:
			w.mu.Lock()
			w.held[tk.id] = tk
			w.mu.Unlock()
			return protocol.Reply{"order": tk.order, "seq": tk.seq, "task": tk.id}, nil
		case <-timer.C:
			return protocol.Reply{"empty": true}, nil
		}
	case "ack":
		w.mu.Lock()
		tk, ok := w.held[r.Task]
		delete(w.held, r.Task)
		w.mu.Unlock()
		if !ok {
			return nil, fmt.Errorf("ack: no task %q held here", r.Task)
		}
		close(tk.done)
		return protocol.Reply{"ok": true}, nil
	case "len":
		info, err := w.insp.GetQueueInfo(w.qname)
		if errors.Is(err, asynq.ErrQueueNotFound) {
			return protocol.Reply{"len": 0}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("queue info: %w", err)
		}
		return protocol.Reply{"len": info.Pending + info.Active + info.Scheduled + info.Retry}, nil
	}
	return nil, fmt.Errorf("unknown op %s", req.Op)
}

// end shuts the sale's server down (a task still in its handler, never asked for, is let
// go: the sale is over) and deletes every key asynq wrote for the queue.
func (w *worker) end() {
	close(w.quit)
	w.srv.Stop()
	w.srv.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var keys []string
	iter := w.c.Scan(ctx, 0, "asynq:{"+w.qname+"}:*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		w.c.Del(ctx, keys[:n]...)
		keys = keys[n:]
	}
	w.c.SRem(ctx, "asynq:queues", w.qname)
	w.c.Close()
}

// documented is what asynq earns in stockbench's sales, with either fulfil, at the sale's
// visibility timeout, and whether the sale waits for the recoverer (recovered): nothing is
// lost or done twice while its workers live; a deploy's SIGTERM pushes the task in hand
// back; a killed worker's task comes back by the recoverer, within the sale only when it
// waits for it (else lost), done twice where the worker had done it; a stall of its
// process (1.5 visibility timeouts) past the 30 s lease hands the task on while the
// stalled worker still does it; a restart without persistence forgets everything.
func documented(visibility time.Duration, recovered bool) map[string][]string {
	safe, safeOrDup := []string{"SAFE"}, []string{"SAFE", "DUPLICATED"}
	crash := []string{"SAFE", "LOST", "DUPLICATED"}
	if recovered {
		crash = safeOrDup
	}
	pause := safe
	if visibility*3/2 >= lease {
		pause = safeOrDup
	}
	return map[string][]string{
		"none": safe, "worker-crash": crash, "reclaimers": crash, "worker-crash-late": safeOrDup,
		"worker-pause": pause, "worker-term": safe, "redis-restart": {"LOST"}, "step-term": {"NOT-EXERCISED"},
		"evict-lease": {"NOT-EXERCISED"}, "evict-job": {"NOT-EXERCISED"}, "consumer-churn": {"NOT-EXERCISED"},
	}
}
