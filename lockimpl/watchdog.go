package lockimpl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// TokenWatchdog is [Token] with a watchdog, as Redisson does it: while the lease is held a
// goroutine extends its TTL every ttl/3 with a compare-and-PEXPIRE, and stops when the
// lease is released or found lost.
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
	return KeepAlive(t, ttl, func(ctx context.Context) (bool, error) {
		n, err := renewScript.Run(ctx, t.client, []string{t.key}, t.token, ttl.Milliseconds()).Int64()
		return n != 0, err
	}), nil
}

// KeepAlive keeps lease alive, as a watchdog does: every ttl/3 until the lease is released
// it calls renew, which reports whether the lock was still held; it stops once it was
// not. The lease KeepAlive returns is a [Freezer], so that a pause of the holder's process
// stops the renewals too, and a [Renewer] that counts them.
func KeepAlive(lease Lease, ttl time.Duration, renew func(context.Context) (held bool, err error)) Lease {
	ctx, stop := context.WithCancel(context.Background())
	l := &watchdogLease{Lease: lease, ttl: ttl, renew: renew, stop: stop}
	l.wg.Go(func() { l.watch(ctx) })
	return l
}

type watchdogLease struct {
	Lease
	ttl   time.Duration
	renew func(context.Context) (bool, error)
	// stop ends the watchdog: the lease was released, or its holder died.
	stop    context.CancelFunc
	wg      sync.WaitGroup
	frozen  atomic.Int64             // unix nanos until which the watchdog is frozen
	starved atomic.Pointer[starving] // the CPU starvation it runs under, if any
	// released is set when Release begins; renewals counted after it are a bug.
	released            atomic.Bool
	renewals, afterward atomic.Int64
	// promised is the send of the last confirmed renewal plus the TTL.
	promised atomic.Pointer[time.Time]
}

var (
	_ Starver  = (*watchdogLease)(nil)
	_ Freezer  = (*watchdogLease)(nil)
	_ Renewer  = (*watchdogLease)(nil)
	_ Extender = (*watchdogLease)(nil)
	_ Teller   = (*watchdogLease)(nil)
)

// StillHeld implements Teller: the lease kept alive answers, where it can tell.
func (l *watchdogLease) StillHeld(ctx context.Context) (bool, error) {
	if t, ok := l.Lease.(Teller); ok {
		return t.StillHeld(ctx)
	}
	return false, ErrCannotTell
}

// watch renews every ttl/3 until stopped or the lock is found lost.
func (l *watchdogLease) watch(ctx context.Context) {
	wait.Every(ctx, max(l.ttl/3, time.Millisecond), func() bool {
		if time.Now().UnixNano() < l.frozen.Load() {
			return true
		}
		if s := l.starved.Load(); s != nil {
			time.Sleep(s.late(time.Now()))
		}
		if l.released.Load() {
			l.afterward.Add(1)
		}
		l.renewals.Add(1)
		sent := time.Now()
		rctx, cancel := context.WithTimeout(context.Background(), l.ttl)
		held, err := l.renew(rctx)
		cancel()
		if held && err == nil {
			until := sent.Add(l.ttl)
			l.promised.Store(&until)
		}
		return err != nil || held // not held: lost, nothing left to renew
	})
}

// Release stops the watchdog and waits for it before it marks the lease released: a
// renewal that was already under way when Release was called is not one after it, and any
// renewal counted afterwards comes from a watchdog that did not stop.
func (l *watchdogLease) Release(ctx context.Context) error {
	l.stop()
	l.wg.Wait()
	l.released.Store(true)
	return l.Lease.Release(ctx)
}

// Starve implements Starver: a renewal due while the process is throttled waits for its
// next run.
func (l *watchdogLease) Starve(until time.Time, run, period time.Duration) {
	l.starved.Store(&starving{from: time.Now(), until: until, run: run, period: period})
}

// starving is a CPU starvation: from from until until, run of every period.
type starving struct {
	from, until time.Time
	run, period time.Duration
}

// late is how long work due at now waits for the process's next run.
func (s *starving) late(now time.Time) time.Duration {
	if now.Before(s.from) || !now.Before(s.until) || s.period <= 0 {
		return 0
	}
	phase := now.Sub(s.from) % s.period
	if phase < s.run {
		return 0
	}
	return min(s.period-phase, s.until.Sub(now))
}

func (l *watchdogLease) Freeze(until time.Time) {
	if until.IsZero() {
		l.stop()
		return
	}
	l.frozen.Store(until.UnixNano())
}

func (l *watchdogLease) PromisedUntil() time.Time {
	if p := l.promised.Load(); p != nil {
		return *p
	}
	return time.Time{}
}

func (l *watchdogLease) Renewals() (int, int) {
	return int(l.renewals.Load()), int(l.afterward.Load())
}
