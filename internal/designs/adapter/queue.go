package adapter

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/queueimpl"
)

// Queue is the queue design the adapter cfg runs: enqueue, dequeue and len, and ack when
// it supports it. The harness's workers take the tasks and fulfil them.
func Queue(cfg Config) queueimpl.Impl {
	return queueimpl.Impl{Name: cfg.Name, Summary: "process adapter: " + cfg.Command, Guarantee: "the adapter's",
		New: func(e queueimpl.Env) queueimpl.Queue {
			return &queue{design: newDesign(cfg, lockimpl.Env{Locks: []redis.UniversalClient{e.Client}, Topology: e.Topology})}
		}}
}

// ProbeQueue is Probe for a queue adapter.
func ProbeQueue(ctx context.Context, cfg Config, c redis.UniversalClient) ([]string, error) {
	d := newDesign(cfg, lockimpl.Env{Locks: []redis.UniversalClient{c}})
	keys := queueimpl.NewKeys("{stockbench:probe}")
	supports, err := d.probe(ctx, c, func(r *Redis) request {
		return queueHello(r, queueimpl.Sale{Keys: keys, Visibility: time.Second})
	})
	if err != nil {
		return nil, err
	}
	return supports, d.checkClassKeys(keys)
}

// checkClassKeys refuses lease_keys or job_keys outside the sale's keys' hash tag: an
// eviction touches only keys under the run's prefix.
func (d *design) checkClassKeys(keys queueimpl.Keys) error {
	tag, _, _ := strings.Cut(keys.Queue, "}")
	tag += "}"
	for field, ks := range map[string][]string{"lease_keys": d.pool.said.LeaseKeys, "job_keys": d.pool.said.JobKeys} {
		for _, k := range ks {
			if !strings.HasPrefix(k, tag) {
				return fmt.Errorf("adapter %s: hello: %s: %q is not under the sale's keys (%s...)", d.cfg.Name, field, k, tag)
			}
		}
	}
	return nil
}

func queueHello(r *Redis, s queueimpl.Sale) request {
	k := s.Keys
	grace := time.Duration(float64(s.Visibility) * faults.WorkerTermGrace)
	req := request{Op: "hello", Protocol: 1, Versions: versions, Redis: r, VisibilityMs: s.Visibility.Milliseconds(),
		TermGraceMs: grace.Milliseconds(), Keys: &Keys{Queue: k.Queue, Processing: k.Processing, Taken: k.Taken, QLock: k.Lock}}
	if len(s.Steps) > 0 {
		req.Steps, req.StepHoldMs = s.Steps, faults.StepHold.Milliseconds()
	}
	return req
}

type queue struct {
	*design
	mu sync.Mutex
	// empties counts, for each process, the dequeues it answered empty since one last
	// handed a task out (see Swept).
	empties map[*proc]int
}

var (
	_ queueimpl.Queue      = (*queue)(nil)
	_ queueimpl.Starter    = (*queue)(nil)
	_ queueimpl.Documenter = (*queue)(nil)
	_ queueimpl.Classed    = (*queue)(nil)
)

// Start implements queueimpl.Starter.
func (q *queue) Start(ctx context.Context, s queueimpl.Sale) error {
	if len(s.Steps) > 0 {
		q.stepped = s.Stepped
	}
	if err := q.start(ctx, q.env.Locks[0], q.cfg.size(s.Conns), func(r *Redis) request { return queueHello(r, s) }); err != nil {
		return err
	}
	q.pool.supervised = true
	if err := q.checkClassKeys(s.Keys); err != nil {
		q.Stop()
		return err
	}
	return nil
}

// ClassKeys implements queueimpl.Classed: what hello's lease_keys and job_keys name,
// once the pool started; a task's own keys, where the library keeps one per task, are
// not named here (its record of every task is one key).
func (q *queue) ClassKeys(class faults.KeyClass, _ queueimpl.Order) []string {
	if q.pool == nil {
		return nil
	}
	switch class {
	case faults.LeaseKeys:
		return q.pool.said.LeaseKeys
	case faults.JobKeys:
		return q.pool.said.JobKeys
	}
	return nil
}

// Procs is the size of the pool serving the sale, once it started: a sale waits long
// enough for its workers to ask each process, which may hold a task its library took.
func (q *queue) Procs() int {
	if q.pool == nil {
		return 0
	}
	return cap(q.pool.idle)
}

// Redelivery is hello's redelivery_ms: the longest the library takes to hand a dead
// worker's task on, or 0 where the visibility timeout says it (or before the pool
// started).
func (q *queue) Redelivery() time.Duration {
	if q.pool == nil || q.pool.said.RedeliveryMs < 0 {
		return 0
	}
	return time.Duration(q.pool.said.RedeliveryMs) * time.Millisecond
}

// Documented implements queueimpl.Documenter: hello's documented for either fulfil,
// unless documented_idempotent says otherwise for an idempotent one.
func (q *queue) Documented() queueimpl.Verdicts {
	v := queueimpl.Verdicts{Naive: q.design.Documented()}
	v.Idempotent = v.Naive
	if q.pool != nil && q.pool.said.DocumentedIdempotent != nil {
		v.Idempotent, _ = faults.ParseVerdicts("documented_idempotent", q.pool.said.DocumentedIdempotent, faults.Queues)
	}
	return v
}

// Enqueue implements queueimpl.Queue.
func (q *queue) Enqueue(ctx context.Context, o queueimpl.Order) error {
	_, err := q.callAny(ctx, request{Op: "enqueue", Order: o.ID, Seq: &o.Seq})
	return err
}

// callAny sends req on a process of the pool, on another when the one it took turns out
// to have exited of its own accord (gone).
func (q *queue) callAny(ctx context.Context, req request) (reply, error) {
	for tries := 0; ; tries++ {
		pr, err := q.pool.get(ctx)
		if err != nil {
			return reply{}, err
		}
		r, err := q.ask(ctx, pr, req)
		if err != nil && tries < 3 {
			if gone, rerr := q.gone(ctx, pr, err); gone {
				if rerr != nil {
					return reply{}, rerr
				}
				continue
			}
		}
		q.pool.put(pr)
		return r, err
	}
}

// gone reports whether pr, whose call failed with err, exited of its own accord, as a
// library's worker stops or kills itself (Laravel's, past its --timeout or once its
// connection was lost), and if so replaces it with a fresh one, as a supervisor
// restarts it, saying so in the adapter's log; rerr is the replacement's failure.
func (q *queue) gone(ctx context.Context, pr *proc, err error) (gone bool, rerr error) {
	if !q.pool.supervises(pr) || ctx.Err() != nil {
		return false, nil
	}
	return true, q.pool.restart(pr, err)
}

// Dequeue implements queueimpl.Queue. A task of an adapter that acknowledges stays with
// the process that handed it out until its ack, as a worker process holds its job.
func (q *queue) Dequeue(ctx context.Context, worker string, wait time.Duration) (queueimpl.Task, error) {
	pr, err := q.pool.getSoon(ctx)
	if err == lockimpl.ErrNotAcquired {
		return nil, queueimpl.ErrEmpty
	}
	if err != nil {
		return nil, err
	}
	r, err := q.ask(ctx, pr, request{Op: "dequeue", Worker: worker, WaitMs: wait.Milliseconds()})
	if pr.struck.Load() {
		// A fault sent it SIGTERM at a step of its worker loop while this call was in
		// flight: it leaves the pool, and what it held is its library's affair.
		return nil, queueimpl.ErrEmpty
	}
	if err != nil {
		if gone, rerr := q.gone(ctx, pr, err); gone {
			return nil, cmp.Or(rerr, queueimpl.ErrEmpty)
		}
	}
	asked := pr
	if err != nil || r.Empty || !q.pool.can(SupportsAck) {
		q.pool.put(pr)
		pr = nil
	}
	switch {
	case err != nil:
		return nil, err
	case r.Empty:
		q.mu.Lock()
		if q.empties == nil {
			q.empties = map[*proc]int{}
		}
		q.empties[asked]++
		q.mu.Unlock()
		return nil, queueimpl.ErrEmpty
	case r.Order == "":
		return nil, fmt.Errorf("%s: dequeue: a task without an order", q.cfg.Name)
	}
	q.mu.Lock()
	clear(q.empties)
	q.mu.Unlock()
	return &task{q: q, pr: pr, id: r.Task, o: queueimpl.Order{ID: r.Order, Seq: r.Seq}}, nil
}

// Swept reports whether every process of the pool answered at least two dequeues empty
// since one last handed a task out: a task its library took into one of them (Celery's
// worker, RQ's loop) was not left unasked. Asks come in turn from the pool's idle
// processes, but a turn is no promise: the backlog's len, asked of the pool's next idle
// process every 50 ms, fell in step with the workers' turns and took the same process
// each time for 2 s, its task never asked for. A process that broke is asked nothing
// more, so it is not waited for.
func (q *queue) Swept() bool {
	if q.pool == nil {
		return true
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pool.every(func(pr *proc) bool { return q.empties[pr] >= 2 || pr.err() != nil })
}

// Len implements queueimpl.Queue.
func (q *queue) Len(ctx context.Context) (int64, error) {
	r, err := q.callAny(ctx, request{Op: "len"})
	if err == nil && r.Len == nil {
		err = fmt.Errorf("%s: len: no len in the reply", q.cfg.Name)
	}
	if err != nil {
		return 0, err
	}
	return *r.Len, nil
}

// task is a task an adapter handed out, with the process that holds it when the adapter
// acknowledges.
type task struct {
	q    *queue
	pr   *proc
	id   string
	o    queueimpl.Order
	dead bool
	// terminated is set once the process was sent SIGTERM: it leaves the pool, whatever
	// it does next.
	terminated bool
}

func (t *task) Order() queueimpl.Order { return t.o }

// Ack implements queueimpl.Task, and gives the process back. A process that exited of
// its own accord while it held the task (its library's own timeout killed it) is
// replaced by a fresh one, as a supervisor restarts it, and the ack says so
// (queueimpl.ErrWorkerGone).
func (t *task) Ack(ctx context.Context) error {
	if t.pr == nil || t.dead {
		return nil
	}
	_, err := t.q.ask(ctx, t.pr, request{Op: "ack", Task: t.id})
	if err != nil {
		if gone := t.wentItself(ctx, err, ""); gone != nil {
			return gone
		}
	}
	if !t.terminated {
		t.q.pool.put(t.pr)
	}
	return err
}

// Wake asks the process that holds the task, stopped by a stall, to answer once it runs
// again, when the adapter supports wake: a library's worker acts on what fell due while
// it was stopped (Laravel's --timeout alarm) as it wakes, before the job's next step.
// One that ended itself then took its task's work with it, and is replaced
// (queueimpl.ErrWorkerGone); an error reply is a live process's, and an adapter that
// does not say wake is not asked.
func (t *task) Wake(ctx context.Context) error {
	if t.pr == nil || t.dead || !t.q.pool.can(SupportsWake) {
		return nil
	}
	if _, err := t.q.ask(ctx, t.pr, request{Op: "wake", Task: t.id}); err != nil {
		return t.wentItself(ctx, err, " as it woke")
	}
	return nil
}

// wentItself handles a call on the task's process that failed with err: where the
// process exited of its own accord, it is replaced, the task dies with it, and the error
// returned wraps queueimpl.ErrWorkerGone (or is the replacement's failure). It returns
// nil where the process did not go, or went by a deploy's SIGTERM, which the sale counts
// itself.
func (t *task) wentItself(ctx context.Context, err error, when string) error {
	if t.terminated {
		return nil
	}
	gone, rerr := t.q.gone(ctx, t.pr, err)
	if !gone {
		return nil
	}
	t.dead = true
	return cmp.Or(rerr, fmt.Errorf("%s: order %s: %w%s (%v)", t.q.cfg.Name, t.o.ID, queueimpl.ErrWorkerGone, when, err))
}

// Terminate sends the process that holds the task SIGTERM, and SIGKILL once grace has
// passed if it is still there, as a deploy does; a fresh process then takes its place.
// The channel returned closes once it is gone. What becomes of the task is what the
// adapter's library does on SIGTERM: drain it, hand it back, or die with it.
func (t *task) Terminate(grace time.Duration) <-chan struct{} {
	if t.pr == nil || t.dead {
		return nil // no process holds it: nothing to strike
	}
	t.terminated = true
	return t.q.pool.terminate(t.pr, grace)
}

// Freeze stops the process that holds the task until until (a stalled worker), or kills
// it for the zero time (a worker that died), with a fresh one in its place. A task no
// process holds has nothing to freeze: the harness's worker stalls or dies alone.
func (t *task) Freeze(until time.Time) {
	if t.pr == nil || t.dead {
		return
	}
	if until.IsZero() {
		t.dead = true
		t.q.pool.replace(context.Background(), t.pr)
		return
	}
	t.pr.pause()
	time.AfterFunc(time.Until(until), t.pr.resume)
}
