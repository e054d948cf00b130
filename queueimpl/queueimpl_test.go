package queueimpl_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/queueimpl"
	_ "github.com/stockbench/stockbench/queueimpl/asynq"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// build makes impl on the package's Redis under keys of the test's own.
func build(t *testing.T, impl queueimpl.Impl, visibility time.Duration) (queueimpl.Queue, queueimpl.Keys) {
	t.Helper()
	c := redistest.Shared(t).Client(8)
	t.Cleanup(func() { c.Close() })
	k := queueimpl.NewKeys(fmt.Sprintf("{test:%s}", t.Name()))
	c.Del(context.Background(), k.All()...)
	q := impl.New(queueimpl.Env{Client: c, Keys: k, Visibility: visibility})
	if s, ok := q.(queueimpl.Starter); ok {
		if err := s.Start(context.Background(), queueimpl.Sale{Keys: k, Visibility: visibility, Conns: 8}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Stop() })
	}
	if s, ok := q.(queueimpl.Setupper); ok {
		if err := s.Setup(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return q, k
}

// TestQueues is the conformance suite: what goes in comes out once, in order where the
// design promises it, and an empty queue says so within the wait.
func TestQueues(t *testing.T) {
	ctx := context.Background()
	for _, impl := range queueimpl.All() {
		t.Run(impl.Name, func(t *testing.T) {
			q, _ := build(t, impl, time.Second)
			for i := range 3 {
				if err := q.Enqueue(ctx, queueimpl.Order{ID: fmt.Sprint(i), Seq: int64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := q.Len(ctx); err != nil || n != 3 {
				t.Errorf("Len: want 3, got %d, %v", n, err)
			}
			for i := range 3 {
				task, err := q.Dequeue(ctx, "w1", 100*time.Millisecond)
				if err != nil {
					t.Fatalf("dequeue %d: %v", i, err)
				}
				if exp, got := fmt.Sprint(i), task.Order().ID; exp != got {
					t.Errorf("dequeue %d: want order %s, got %s", i, exp, got)
				}
				if err := task.Ack(ctx); err != nil {
					t.Fatal(err)
				}
			}
			began := time.Now()
			if _, err := q.Dequeue(ctx, "w1", 100*time.Millisecond); !errors.Is(err, queueimpl.ErrEmpty) {
				t.Errorf("empty queue: want ErrEmpty, got %v", err)
			}
			if waited := time.Since(began); waited > 600*time.Millisecond {
				t.Errorf("empty queue kept the worker %s for a 100ms wait", waited)
			}
			if n, _ := q.Len(ctx); n != 0 {
				t.Errorf("Len after acks: want 0, got %d", n)
			}
		})
	}
}

// TestRedelivery: an at-least-once design hands a task not acked within the visibility
// timeout to another worker, and an acked one never.
func TestRedelivery(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"reliable-list", "stream"} {
		t.Run(name, func(t *testing.T) {
			impl, _ := queueimpl.Lookup(name)
			q, _ := build(t, impl, 100*time.Millisecond)
			q.Enqueue(ctx, queueimpl.Order{ID: "a", Seq: 1})
			q.Enqueue(ctx, queueimpl.Order{ID: "b", Seq: 2})
			a, _ := q.Dequeue(ctx, "dies", 100*time.Millisecond) // never acked
			b, _ := q.Dequeue(ctx, "lives", 100*time.Millisecond)
			b.Ack(ctx)
			time.Sleep(200 * time.Millisecond)
			if r, ok := q.(queueimpl.Reaper); ok {
				if n, err := r.Reap(ctx); err != nil || n != 1 {
					t.Fatalf("reap: want 1 requeued, got %d, %v", n, err)
				}
			}
			again, err := q.Dequeue(ctx, "lives", 100*time.Millisecond)
			if err != nil || again.Order().ID != a.Order().ID {
				t.Fatalf("want %s again, got %v, %v", a.Order().ID, again, err)
			}
			again.Ack(ctx)
			if _, err := q.Dequeue(ctx, "lives", 100*time.Millisecond); !errors.Is(err, queueimpl.ErrEmpty) {
				t.Errorf("after both acks: want ErrEmpty, got %v", err)
			}
		})
	}
}

// TestAsynqLease: a task whose worker died stays leased to it (30 s, past any sale), and
// what asynq wrote goes with the sale.
func TestAsynqLease(t *testing.T) {
	ctx := context.Background()
	impl, _ := queueimpl.Lookup("asynq")
	q, _ := build(t, impl, 50*time.Millisecond)
	q.Enqueue(ctx, queueimpl.Order{ID: "a", Seq: 1})
	task, err := q.Dequeue(ctx, "dies", 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	task.(interface{ Freeze(time.Time) }).Freeze(time.Time{})
	if _, err := q.Dequeue(ctx, "lives", 300*time.Millisecond); !errors.Is(err, queueimpl.ErrEmpty) {
		t.Errorf("want the dead worker's task still leased, got %v", err)
	}
	if n, err := q.Len(ctx); err != nil || n != 1 {
		t.Errorf("Len: want the leased task, got %d, %v", n, err)
	}
	q.(queueimpl.Starter).Stop()
	c := redistest.Shared(t).Client(1)
	defer c.Close()
	if keys := c.Keys(ctx, "asynq:{test*").Val(); len(keys) > 0 {
		t.Errorf("asynq's keys of the sale left behind: %v", keys)
	}
}

// TestAtMostOnce: a task taken and never acked is gone.
func TestAtMostOnce(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"list", "zpopmin"} {
		t.Run(name, func(t *testing.T) {
			impl, _ := queueimpl.Lookup(name)
			q, _ := build(t, impl, 50*time.Millisecond)
			q.Enqueue(ctx, queueimpl.Order{ID: "a", Seq: 1})
			q.Dequeue(ctx, "dies", 100*time.Millisecond)
			time.Sleep(100 * time.Millisecond)
			if _, err := q.Dequeue(ctx, "lives", 100*time.Millisecond); !errors.Is(err, queueimpl.ErrEmpty) {
				t.Errorf("want the task gone, got %v", err)
			}
		})
	}
}

// TestZPopMinPriority: lowest Seq first, whatever the order of arrival.
func TestZPopMinPriority(t *testing.T) {
	ctx := context.Background()
	impl, _ := queueimpl.Lookup("zpopmin")
	q, _ := build(t, impl, time.Second)
	for _, seq := range []int64{5, 1, 3} {
		q.Enqueue(ctx, queueimpl.Order{ID: fmt.Sprint(seq), Seq: seq})
	}
	for _, want := range []string{"1", "3", "5"} {
		task, err := q.Dequeue(ctx, "w", 100*time.Millisecond)
		if err != nil || task.Order().ID != want {
			t.Fatalf("want %s, got %v, %v", want, task, err)
		}
	}
}

// heldStamp holds a worker's stamp of its take (the command that follows its BLMOVE)
// until released, as a worker descheduled between the two would.
type heldStamp struct{ held, release chan struct{} }

func (heldStamp) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h heldStamp) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "blmove" && n != "hello" && n != "client" {
			close(h.held)
			<-h.release
		}
		return next(ctx, cmd)
	}
}

func (heldStamp) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReliableListLateStamp: a worker whose stamp of its take reaches Redis late, after
// its task was handed on (its clock started by the reaper) and taken by another, does
// not move the other's clock back: the task is not handed on a third time while the
// second worker's lease is live.
func TestReliableListLateStamp(t *testing.T) {
	ctx := context.Background()
	const vis = 100 * time.Millisecond
	impl, _ := queueimpl.Lookup("reliable-list")
	q, k := build(t, impl, vis)
	q.Enqueue(ctx, queueimpl.Order{ID: "a", Seq: 1})

	slow := redistest.Shared(t).Client(1)
	t.Cleanup(func() { slow.Close() })
	hold := heldStamp{held: make(chan struct{}), release: make(chan struct{})}
	slow.AddHook(hold)
	first := impl.New(queueimpl.Env{Client: slow, Keys: k, Visibility: vis})
	taken := make(chan error, 1)
	go func() {
		_, err := first.Dequeue(ctx, "slow", time.Second)
		taken <- err
	}()
	<-hold.held // taken, not yet stamped
	r := q.(queueimpl.Reaper)
	r.Reap(ctx) // no time yet: its clock starts now
	time.Sleep(vis + 20*time.Millisecond)
	if n, err := r.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("reap past the visibility timeout: want 1 handed on, got %d, %v", n, err)
	}
	second, err := q.Dequeue(ctx, "second", time.Second)
	if err != nil || second.Order().ID != "a" {
		t.Fatalf("second take: want a, got %v, %v", second, err)
	}
	close(hold.release) // the first worker's stamp arrives now
	if err := <-taken; err != nil {
		t.Fatal(err)
	}
	if n, err := r.Reap(ctx); err != nil || n != 0 {
		t.Errorf("reap within the second worker's lease: want nothing handed on, got %d, %v", n, err)
	}
	if third, err := q.Dequeue(ctx, "third", 50*time.Millisecond); !errors.Is(err, queueimpl.ErrEmpty) {
		t.Errorf("a third take while the second's lease is live: want ErrEmpty, got %v, %v", third, err)
	}
}

// TestStreamLenWithoutLag: a group whose lag Redis no longer knows (nil in XINFO GROUPS,
// as after a restart from an AOF, or after XGROUP SETID without ENTRIESREAD) still counts
// the entries no worker has had; read as go-redis's -1, one pending task hid the rest,
// and a sale ended with accepted orders undone. Past the counting bound, Len fails
// rather than answer a number it does not know.
func TestStreamLenWithoutLag(t *testing.T) {
	ctx := context.Background()
	impl, _ := queueimpl.Lookup("stream")
	q, k := build(t, impl, time.Second)
	c := redistest.Shared(t).Client(1)
	t.Cleanup(func() { c.Close() })
	for _, tc := range []struct {
		waiting int
		want    int64 // -1: Len fails
	}{{0, 1}, {1, 2}, {2500, 2501}, {10_001, -1}} {
		t.Run(fmt.Sprint(tc.waiting), func(t *testing.T) {
			c.Del(ctx, k.Queue)
			if err := q.(queueimpl.Setupper).Setup(ctx); err != nil {
				t.Fatal(err)
			}
			pipe := c.Pipeline()
			for i := range tc.waiting + 2 { // one done, one pending, the rest waiting
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: k.Queue, Values: []any{"id", fmt.Sprint(i)}})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			done, err := q.Dequeue(ctx, "w1", 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			done.Ack(ctx)
			task, err := q.Dequeue(ctx, "w1", 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			// Between the first entry and the last, Redis cannot tell how many the group read.
			taken, _ := c.XRangeN(ctx, k.Queue, "-", "+", 2).Result()
			if err := c.XGroupSetID(ctx, k.Queue, "workers", taken[1].ID).Err(); err != nil {
				t.Fatal(err)
			}
			n, err := q.Len(ctx)
			switch {
			case tc.want < 0 && err == nil:
				t.Errorf("Len: want an error past %d entries, got %d", 10_000, n)
			case tc.want >= 0 && (err != nil || n != tc.want):
				t.Errorf("Len: want %d (1 pending, %d waiting), got %d, %v", tc.want, tc.waiting, n, err)
			}
			task.Ack(ctx)
		})
	}
}
