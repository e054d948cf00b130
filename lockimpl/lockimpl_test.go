package lockimpl

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// client returns a client on the package's Redis.
func client(t *testing.T) redis.UniversalClient {
	t.Helper()
	c := redistest.Shared(t).Client(8)
	t.Cleanup(func() { c.Close() })
	return c
}

var keySeq atomic.Int64

func uniqueKey(t *testing.T) string {
	return fmt.Sprintf("{test:%s:%d}:lock", t.Name(), keySeq.Add(1))
}

// env builds an Env for impl on the package's Redis: its lock nodes are separate
// databases of one server, which are independent keyspaces, as Redlock needs. A design
// that waits for a replica gets a server of its own with one.
func env(t *testing.T, impl Impl) Env {
	t.Helper()
	tg := redistest.Shared(t)
	if impl.Replicas > 0 {
		primary, replica := redistest.Start(t), redistest.Start(t)
		if err := replica.ReplicaOf(context.Background(), primary); err != nil {
			t.Fatal(err)
		}
		c := primary.Client(4)
		t.Cleanup(func() { c.Close() })
		return Env{Stock: c, Locks: []redis.UniversalClient{c}}
	}
	e := Env{Stock: client(t)}
	for db := range impl.LockNodes() {
		c := tg.ClientDB(4, db)
		t.Cleanup(func() { c.Close() })
		e.Locks = append(e.Locks, c)
	}
	return e
}

// TestLockers is the conformance suite every lock design passes: a lock excludes a second
// taker until it is released, and its TTL is what the design says.
func TestLockers(t *testing.T) {
	ctx := context.Background()
	for _, impl := range All() {
		if impl.NewLocker == nil || impl.Name == "none" {
			continue
		}
		t.Run(impl.Name, func(t *testing.T) {
			e := env(t, impl)
			l := impl.NewLocker(e)
			key := uniqueKey(t)
			lease, err := l.TryLock(ctx, key, 1500*time.Millisecond)
			// A design that waits for a replica refuses a lock no replica acknowledged
			// within its WAIT; on a machine loaded by the other packages' tests (a load
			// average of 24 in CI) the first acknowledgement can take longer. A user's
			// retry loop would try again; so does this, for 5 s at most.
			for deadline := time.Now().Add(5 * time.Second); impl.Replicas > 0 && errors.Is(err, ErrNotAcquired) && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
				lease, err = l.TryLock(ctx, key, 1500*time.Millisecond)
			}
			if err != nil {
				t.Fatalf("first TryLock: %v", err)
			}
			if _, err := l.TryLock(ctx, key, time.Second); !errors.Is(err, ErrNotAcquired) {
				t.Fatalf("second TryLock while held: want ErrNotAcquired, got %v", err)
			}
			// PTTL: TTL rounds to the nearest second, and a 1.5 s PX lock read at once reads 2 s.
			ttl := e.Locks[0].PTTL(ctx, key).Val()
			min, max := expectedTTL(impl.Name)
			if ttl < min || ttl > max {
				t.Errorf("TTL: want between %s and %s, got %s", min, max, ttl)
			}
			if err := lease.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			lease, err = l.TryLock(ctx, key, time.Second)
			if err != nil {
				t.Fatalf("TryLock after release: %v", err)
			}
			lease.Release(ctx)
		})
	}
}

// expectedTTL is each design's TTL for a 1.5s request.
func expectedTTL(name string) (time.Duration, time.Duration) {
	switch name {
	case "seed-setnx":
		// The timestamp-as-TTL flaw: about 56 years from 2026.
		return 50 * 365 * 24 * time.Hour, 80 * 365 * 24 * time.Hour
	case "setnx-expire", "set-nx-ex":
		return time.Second, 2 * time.Second // 1.5s rounded up to whole seconds
	default:
		return time.Second, 1500 * time.Millisecond // PX: as asked
	}
}

// TestSeedStealsHeldLock shows the seed port's second flaw: a holder caught between its
// SETNX and its EXPIRE has a lock with no TTL, and the seed takes it from under it.
func TestSeedStealsHeldLock(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	key := uniqueKey(t)
	if err := c.SetNX(ctx, key, time.Now().Add(time.Minute).Unix(), 0).Err(); err != nil {
		t.Fatal(err) // another buyer's SETNX, its EXPIRE not sent yet
	}
	if _, err := (SeedSetNX{c}).TryLock(ctx, key, time.Second); err != nil {
		t.Fatalf("want the seed to steal the lock, got %v", err)
	}
}

// TestSetNXExpireStuckAfterCrash: a holder that dies between SETNX and EXPIRE leaves a
// lock with no TTL that nobody ever gets again.
func TestSetNXExpireStuckAfterCrash(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	key := uniqueKey(t)
	c.SetNX(ctx, key, 1, 0) // the crashed holder's SETNX
	r := Retry{Interval: 10 * time.Millisecond, Timeout: 200 * time.Millisecond}
	if _, _, err := r.Acquire(ctx, SetNXExpire{c}, key, time.Second); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("want ErrNotAcquired, got %v", err)
	}
	if exp, got := time.Duration(-1), c.TTL(ctx, key).Val(); exp != got {
		t.Errorf("TTL: want %v (no expiry: stuck), got %v", exp, got)
	}
}

// TestDelLeaseDeletesAnothersLock: set-nx-ex's release has no owner check, so a holder
// whose lock expired deletes the next holder's lock.
func TestDelLeaseDeletesAnothersLock(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	key := uniqueKey(t)
	l := SetNXEX{c}
	first, err := l.TryLock(ctx, key, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Del(ctx, key) // the first lock expires
	if _, err := l.TryLock(ctx, key, time.Second); err != nil {
		t.Fatalf("second holder: %v", err)
	}
	first.Release(ctx)
	if n := c.Exists(ctx, key).Val(); n != 0 {
		t.Errorf("want the first holder's release to delete the second holder's lock; key still exists")
	}
}

func TestLuaPurchase(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	s := Stock{Key: "{test:lua}:stock", Orders: "{test:lua}:orders"}
	c.Del(ctx, s.Key, s.Orders)
	c.Set(ctx, s.Key, 2, 0)
	p := Lua{c}
	for _, want := range []int64{1, 0} {
		left, err := p.Purchase(ctx, s, "b", 0)
		if err != nil || left != want {
			t.Fatalf("purchase: want %d left, got %d, %v", want, left, err)
		}
	}
	if _, err := p.Purchase(ctx, s, "b", 0); !errors.Is(err, ErrSoldOut) {
		t.Fatalf("third purchase: want ErrSoldOut, got %v", err)
	}
	if exp, got := int64(2), c.LLen(ctx, s.Orders).Val(); exp != got {
		t.Errorf("orders: want %d, got %d", exp, got)
	}
	if exp, got := "0", c.Get(ctx, s.Key).Val(); exp != got {
		t.Errorf("stock: want %s, got %s", exp, got)
	}
}

func TestLookup(t *testing.T) {
	if _, err := Lookup("set-nx-ex"); err != nil {
		t.Fatal(err)
	}
	_, err := Lookup("nope")
	if err == nil || !strings.Contains(err.Error(), `unknown lock "nope"`) || !strings.Contains(err.Error(), "seed-setnx") {
		t.Errorf("want an error naming the unknown lock and the known ones, got %v", err)
	}
}

func TestRegisterRejects(t *testing.T) {
	tests := []struct {
		name string
		impl Impl
	}{
		// A name already taken.
		{"duplicate", Impl{Name: "lua", NewPurchaser: func(Env) Purchaser { return nil }}},
		// Neither a locker nor a purchaser.
		{"builds nothing", Impl{Name: "empty"}},
		// Both at once.
		{"builds both", Impl{Name: "both",
			NewLocker:    func(Env) Locker { return nil },
			NewPurchaser: func(Env) Purchaser { return nil }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("want a panic")
				}
			}()
			Register(tt.impl)
		})
	}
}

func TestWholeSeconds(t *testing.T) {
	for in, want := range map[time.Duration]time.Duration{
		0: time.Second, time.Millisecond: time.Second, time.Second: time.Second,
		1500 * time.Millisecond: 2 * time.Second, 3 * time.Second: 3 * time.Second,
	} {
		if got := wholeSeconds(in); got != want {
			t.Errorf("wholeSeconds(%s): want %s, got %s", in, want, got)
		}
	}
}

// Without a replica to acknowledge it, token-wait gives the lock back and says why.
func TestTokenWaitWithoutReplica(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	key := uniqueKey(t)
	_, err := TokenWait{Client: c, Timeout: 20 * time.Millisecond}.TryLock(ctx, key, time.Second)
	if !errors.Is(err, ErrNotReplicated) || !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("want ErrNotReplicated, got %v", err)
	}
	if n := c.Exists(ctx, key).Val(); n != 0 {
		t.Error("the unacknowledged lock was left behind")
	}
}

// A renewal due while a starved process is throttled waits for its next run, and not
// past the starvation's end.
func TestStarvingLate(t *testing.T) {
	from := time.Now()
	s := &starving{from: from, until: from.Add(time.Second), run: 10 * time.Millisecond, period: 100 * time.Millisecond}
	for _, tc := range []struct {
		at, want time.Duration
	}{
		{-time.Millisecond, 0}, {5 * time.Millisecond, 0}, {10 * time.Millisecond, 90 * time.Millisecond},
		{150 * time.Millisecond, 50 * time.Millisecond}, {995 * time.Millisecond, 5 * time.Millisecond}, {time.Second, 0},
	} {
		if got := s.late(from.Add(tc.at)); got != tc.want {
			t.Errorf("at %s: want %s late, got %s", tc.at, tc.want, got)
		}
	}
}

// A watchdog starved of CPU renews only in its process's runs: every renewal sent while
// starving falls in the first run of some period, none is skipped for good.
func TestStarvedWatchdog(t *testing.T) {
	var mu sync.Mutex
	var sent []time.Time
	l := KeepAlive(nil, 150*time.Millisecond, func(context.Context) (bool, error) {
		mu.Lock()
		sent = append(sent, time.Now())
		mu.Unlock()
		return true, nil
	})
	from := time.Now()
	l.(Starver).Starve(from.Add(600*time.Millisecond), 10*time.Millisecond, 100*time.Millisecond)
	time.Sleep(700 * time.Millisecond)
	l.(Freezer).Freeze(time.Time{})
	mu.Lock()
	defer mu.Unlock()
	during := 0
	for _, at := range sent {
		if d := at.Sub(from); d < 590*time.Millisecond {
			during++
			// A run is 10 ms and the renewal goes out in it; the 30 ms more are the wake-up
			// of its goroutine on a busy machine (26 ms past a run seen under make test).
			// A renewal sent while stopped falls anywhere in the 90 ms of the period the
			// process is stopped for, at the watchdog's own pace: past 40 ms in one of
			// three renewals or more.
			if phase := d % (100 * time.Millisecond); phase > 40*time.Millisecond {
				t.Errorf("a renewal went out %s into a period, while its process was stopped", phase)
			}
		}
	}
	if during < 3 {
		t.Errorf("want the watchdog renewing through the starvation, late, got %d renewals", during)
	}
}
