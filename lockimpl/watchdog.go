package lockimpl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// TokenWatchdog is [Token] with a watchdog, as Redisson does it: while the lease is held a
// goroutine extends its TTL every ttl/3 with a compare-and-PEXPIRE, and stops when the
// lease is released or found lost.
//
// Expected verdict: survives slow work, since the lock never expires under a live holder;
// not a stop-the-world pause ([Freezer]), which stops the watchdog with the holder, nor a
// failover that loses the lock.
type TokenWatchdog struct {
	Client redis.Cmdable
}

var _ Locker = TokenWatchdog{}

var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// TryLock implements [Locker].
func (w TokenWatchdog) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	t, err := takeToken(ctx, w.Client, key, ttl)
	if err != nil {
		return nil, fmt.Errorf("token-watchdog: %w", err)
	}
	if t == nil {
		return nil, ErrNotAcquired
	}
	l := &watchdogLease{tokenLease: t, ttl: ttl, stop: make(chan struct{}), dead: make(chan struct{})}
	l.wg.Add(1)
	go l.watch()
	return l, nil
}

type watchdogLease struct {
	*tokenLease
	ttl    time.Duration
	stop   chan struct{} // closed by Release
	dead   chan struct{} // closed by Freeze(time.Time{}): the holder died
	die    sync.Once
	wg     sync.WaitGroup
	frozen atomic.Int64 // unix nanos until which the watchdog is frozen
	// released is set when Release begins; renewals counted after it are a bug.
	released            atomic.Bool
	renewals, afterward atomic.Int64
}

var (
	_ Freezer = (*watchdogLease)(nil)
	_ Renewer = (*watchdogLease)(nil)
)

// watch renews every ttl/3 until stopped or the lock is found lost.
func (l *watchdogLease) watch() {
	defer l.wg.Done()
	tick := time.NewTicker(max(l.ttl/3, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.dead:
			return
		case now := <-tick.C:
			if now.UnixNano() < l.frozen.Load() {
				continue
			}
			if l.released.Load() {
				l.afterward.Add(1)
			}
			l.renewals.Add(1)
			ctx, cancel := context.WithTimeout(context.Background(), l.ttl)
			n, err := renewScript.Run(ctx, l.client, []string{l.key}, l.token, l.ttl.Milliseconds()).Int64()
			cancel()
			if err == nil && n == 0 {
				return // lost: nothing left to renew
			}
		}
	}
}

func (l *watchdogLease) Release(ctx context.Context) error {
	l.released.Store(true)
	close(l.stop)
	l.wg.Wait()
	return l.tokenLease.Release(ctx)
}

func (l *watchdogLease) Freeze(until time.Time) {
	if until.IsZero() {
		l.die.Do(func() { close(l.dead) })
		return
	}
	l.frozen.Store(until.UnixNano())
}

func (l *watchdogLease) Renewals() (int, int) {
	return int(l.renewals.Load()), int(l.afterward.Load())
}
