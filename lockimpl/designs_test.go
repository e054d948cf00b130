package lockimpl

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestTokenReleaseChecksOwner: a holder whose lock expired and was taken gets ErrNotHeld,
// and the new holder keeps its lock.
func TestTokenReleaseChecksOwner(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	key := uniqueKey(t)
	l := Token{c}
	first, err := l.TryLock(ctx, key, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // expires
	if _, err := l.TryLock(ctx, key, time.Minute); err != nil {
		t.Fatalf("second holder: %v", err)
	}
	if err := first.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("stale release: want ErrNotHeld, got %v", err)
	}
	if c.Exists(ctx, key).Val() != 1 {
		t.Error("the stale release deleted the second holder's lock")
	}
}

// TestWatchdog: renewals keep the lock past its TTL; a freeze (stop-the-world pause) lets
// it expire; Release stops the renewals before deleting.
func TestWatchdog(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	ttl := 150 * time.Millisecond

	key := uniqueKey(t)
	lease, err := TokenWatchdog{c}.TryLock(ctx, key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * ttl)
	if c.Exists(ctx, key).Val() != 1 {
		t.Fatal("want the watchdog to keep the lock past its TTL")
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("release: %v", err)
	}
	total, after := lease.(Renewer).Renewals()
	if total < 2 || after != 0 {
		t.Errorf("renewals: want at least 2 and none after release, got %d and %d", total, after)
	}

	key = uniqueKey(t)
	lease, err = TokenWatchdog{c}.TryLock(ctx, key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	lease.(Freezer).Freeze(time.Now().Add(time.Minute))
	time.Sleep(3 * ttl)
	if c.Exists(ctx, key).Val() != 0 {
		t.Error("want a frozen watchdog to let the lock expire")
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("release after expiry: want ErrNotHeld, got %v", err)
	}
}

// TestFencedStore: a read must bring a newer token than any seen, a write the token of
// the latest read; refusals are counted.
func TestFencedStore(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	s := NewStock("{test:fence}")
	c.Del(ctx, s.Keys()...)
	c.Set(ctx, s.Key, 10, 0)

	n, err := FencedRead(ctx, c, s, 5) // holder 5 reads
	if err != nil || n != 10 {
		t.Fatalf("read 5: %d, %v", n, err)
	}
	if _, err := FencedRead(ctx, c, s, 6); err != nil { // its lock was lost: 6 reads
		t.Fatalf("read 6: %v", err)
	}
	if err := FencedWrite(ctx, c, s, 5, 9, "a"); !errors.Is(err, ErrStale) {
		t.Errorf("write by 5 after 6 read: want ErrStale, got %v", err)
	}
	if err := FencedWrite(ctx, c, s, 6, 9, "b"); err != nil {
		t.Errorf("write by 6: %v", err)
	}
	if _, err := FencedRead(ctx, c, s, 6); !errors.Is(err, ErrStale) {
		t.Errorf("a repeated token: want ErrStale, got %v", err)
	}
	if exp, got := "9", c.Get(ctx, s.Key).Val(); exp != got {
		t.Errorf("stock: want %s, got %s", exp, got)
	}
	if exp, got := "2", c.Get(ctx, s.Stale).Val(); exp != got {
		t.Errorf("stale count: want %s, got %s", exp, got)
	}
}

// TestFencingTokensGrow: each grant gets a larger fencing token.
func TestFencingTokensGrow(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	key := uniqueKey(t)
	var last int64
	for range 3 {
		lease, err := Fencing{c}.TryLock(ctx, key, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		tok := lease.(Fenced).Token()
		if tok <= last {
			t.Errorf("token %d after %d", tok, last)
		}
		last = tok
		lease.Release(ctx)
	}
}

// TestWatchPurchase: concurrent optimistic buyers sell exactly the stock.
func TestWatchPurchase(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	s := NewStock("{test:watch}")
	c.Del(ctx, s.Keys()...)
	c.Set(ctx, s.Key, 5, 0)
	w := Watch{Client: c, Retry: Retry{Interval: time.Millisecond, Timeout: 10 * time.Second}}
	var mu sync.Mutex
	bought, soldOut := 0, 0
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			_, err := w.Purchase(ctx, s, "b", time.Millisecond)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				bought++
			case errors.Is(err, ErrSoldOut):
				soldOut++
			default:
				t.Errorf("purchase: %v", err)
			}
		})
	}
	wg.Wait()
	if bought != 5 || soldOut != 15 {
		t.Errorf("want 5 bought and 15 sold out, got %d and %d", bought, soldOut)
	}
	if exp, got := int64(5), c.LLen(ctx, s.Orders).Val(); exp != got {
		t.Errorf("orders: want %d, got %d", exp, got)
	}
}

// TestWatchTry: a try whose stock is written by someone else while it thinks is beaten
// (ErrNotAcquired, nothing written); an unbeaten try buys.
func TestWatchTry(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	s := NewStock("{test:watch-try}")
	c.Del(ctx, s.Keys()...)
	c.Set(ctx, s.Key, 5, 0)
	// The try's client says when it has read the stock and holds its transaction until
	// the other writer wrote: the race decided in the order the test is about, whatever
	// the machine's pace.
	tc := redis.NewClient(c.(*redis.Client).Options())
	t.Cleanup(func() { tc.Close() })
	steps := stepHook{read: make(chan struct{}), written: make(chan struct{})}
	tc.AddHook(steps)
	w := Watch{Client: tc}

	done := make(chan error, 1)
	go func() {
		_, err := w.Try(ctx, s, "beaten", 0)
		done <- err
	}()
	<-steps.read
	c.Set(ctx, s.Key, 4, 0)
	close(steps.written)
	if err := <-done; !errors.Is(err, ErrNotAcquired) {
		t.Errorf("beaten try: want ErrNotAcquired, got %v", err)
	}
	if n := c.LLen(ctx, s.Orders).Val(); n != 0 {
		t.Errorf("a beaten try recorded %d orders", n)
	}
	if left, err := (Watch{Client: c}).Try(ctx, s, "alone", 0); err != nil || left != 3 {
		t.Errorf("unbeaten try: want 3 left, got %d, %v", left, err)
	}
}

// stepHook holds a WATCH try at its steps: read closes once its GET is answered, and its
// write (MULTI, SET, RPUSH, EXEC) waits for written.
type stepHook struct{ read, written chan struct{} }

func (stepHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h stepHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "get" {
			close(h.read)
		}
		return err
	}
}

func (h stepHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if slices.ContainsFunc(cmds, func(c redis.Cmder) bool { return c.Name() == "rpush" }) {
			<-h.written // the try's write, not the connection's set-up
		}
		return next(ctx, cmds)
	}
}

// TestHalfLock: the two-command designs' first command alone leaves a lock without TTL.
func TestHalfLock(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	for _, h := range []HalfLocker{SeedSetNX{c}, SetNXExpire{c}} {
		key := uniqueKey(t)
		ok, err := h.HalfLock(ctx, key, time.Second)
		if err != nil || !ok {
			t.Fatalf("%T: %v, %v", h, ok, err)
		}
		if exp, got := time.Duration(-1), c.TTL(ctx, key).Val(); exp != got {
			t.Errorf("%T: TTL want %v, got %v", h, exp, got)
		}
	}
}

// TestRedlockNeedsMajority: with two of five nodes already holding the key for someone
// else the lock is still granted; with three, it is not.
func TestRedlockNeedsMajority(t *testing.T) {
	impl, _ := Lookup("redlock")
	e := env(t, impl)
	ctx := context.Background()
	for _, tt := range []struct {
		taken int
		want  error
	}{{2, nil}, {3, ErrNotAcquired}} {
		key := uniqueKey(t)
		for i := range tt.taken {
			e.Locks[i].Set(ctx, key, "someone", time.Minute)
		}
		lease, err := impl.NewLocker(e).TryLock(ctx, key, time.Second)
		if !errors.Is(err, tt.want) {
			t.Errorf("%d of 5 taken: want %v, got %v", tt.taken, tt.want, err)
		}
		if lease != nil {
			lease.Release(ctx)
		}
	}
}
