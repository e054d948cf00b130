package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/wait"
)

// latency delays every response on every link.
func latency(_ context.Context, in *Injector, f Fault) (string, error) {
	var errs []error
	for _, l := range in.paths(in.srv.Links, -1) {
		errs = append(errs, l.AddToxic("latency", "latency", map[string]any{
			"latency": f.latency().Milliseconds(), "jitter": f.jitter().Milliseconds(),
		}))
	}
	return fmt.Sprintf("every response delayed %s ± %s", f.latency(), f.jitter()), errors.Join(errs...)
}

// outage stops all data to and from the lock server for d, or until ctx ends: toxiproxy's
// timeout toxic drops what is sent meanwhile, and closes the connections as it is
// removed (its Cleanup), so that clients meet errors and dial again.
func (in *Injector) outage(ctx context.Context, d time.Duration) error {
	return cut(ctx, "outage", in.paths([]Link{in.srv.LockLink}, 0), d)
}

// paths is own and, when application instances have paths of their own, theirs: every
// one (server < 0) or the one to lock server server.
func (in *Injector) paths(own []Link, server int) []Link {
	if in.srv.AppLinks == nil {
		return own
	}
	for _, ls := range in.srv.AppLinks()[1:] {
		switch {
		case server < 0:
			own = append(own, ls...)
		case server < len(ls):
			own = append(own, ls[server])
		}
	}
	return own
}

// cut stops all data on links for d, or until ctx ends, with toxiproxy's timeout
// toxic (named name).
func cut(ctx context.Context, name string, links []Link, d time.Duration) error {
	var errs []error
	added := links[:0:0]
	for _, l := range links {
		if err := l.AddToxic(name, "timeout", map[string]any{"timeout": 0}); err != nil {
			errs = append(errs, err)
			continue
		}
		added = append(added, l)
	}
	if len(errs) == 0 {
		wait.Sleep(ctx, d)
	}
	for _, l := range added {
		errs = append(errs, l.RemoveToxic(name))
	}
	return errors.Join(errs...)
}

// blackhole stops all data between application instance app and the lock servers for
// d, or until ctx ends, as outage does on the path every instance shares; the other
// instances' paths carry on.
func (in *Injector) blackhole(ctx context.Context, app int, d time.Duration) error {
	if in.srv.AppLinks == nil {
		return errors.New("app-blackhole: the sale's instances share one path to the lock servers")
	}
	all := in.srv.AppLinks()
	if app < 0 || app >= len(all) || len(all[app]) == 0 {
		return fmt.Errorf("app-blackhole: app %d has no path of its own to the lock servers", app+1)
	}
	return cut(ctx, "blackhole", all[app], d)
}

// evict makes the lock server evict the keys with the shortest TTL first and keeps it
// past its memory limit until Stop: a writer adds large keys with a long TTL, so that
// few keys are ever there to sample and the lock, when sampled, goes first.
func evict(ctx context.Context, in *Injector, _ Fault) (string, error) {
	c := in.srv.Admin
	used, err := usedMemory(ctx, c)
	if err != nil {
		return "", err
	}
	limit := used + 1<<20
	for _, kv := range [][2]string{
		{"maxmemory-policy", "volatile-ttl"}, {"maxmemory-samples", "10"}, {"maxmemory", strconv.FormatInt(limit, 10)},
	} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return "", err
		}
	}
	const every, fillKB = 2 * time.Millisecond, 100
	in.bg.Go(func() {
		defer c.ConfigSet(context.WithoutCancel(ctx), "maxmemory", "0")
		filler := make([]byte, fillKB<<10)
		i := 0
		wait.Every(in.halt, every, func() bool {
			if ctx.Err() != nil {
				return false
			}
			c.Set(ctx, in.prefix+":fill:"+strconv.Itoa(i), filler, time.Hour)
			i++
			return true
		})
	})
	return fmt.Sprintf("maxmemory %d bytes, volatile-ttl, filled with %dKB keys every %s", limit, fillKB, every), nil
}

// usedMemory reads used_memory from INFO memory.
func usedMemory(ctx context.Context, c redis.UniversalClient) (int64, error) {
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, errors.New("INFO memory has no used_memory")
}

// answerErrors makes the lock server answer errors to writes for d, then as before: OOM
// (maxmemory below what it uses, noeviction), or READONLY (a replica of a master that
// is not there, which keeps its data, as a demoted master does until it syncs).
func answerErrors(ctx context.Context, in *Injector, _ Fault, d time.Duration, who Who) (string, error) {
	c := in.srv.Admin
	mode := ModeOOM
	for _, a := range in.armed {
		if a.Kind == ServerErrors {
			mode = a.mode()
		}
	}
	if mode == ModeLoading {
		return reload(ctx, in, d, who)
	}
	var start, end func(context.Context) error
	what := "OOM to writes (maxmemory 1 byte, noeviction)"
	switch mode {
	case ModeReadonly:
		what = "READONLY to writes (a replica of 127.0.0.1:1, a master that is not there)"
		start = func(ctx context.Context) error { return c.SlaveOf(ctx, "127.0.0.1", "1").Err() }
		end = func(ctx context.Context) error { return c.SlaveOf(ctx, "NO", "ONE").Err() }
	default:
		start = func(ctx context.Context) error {
			if err := c.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
				return err
			}
			return c.ConfigSet(ctx, "maxmemory", "1").Err()
		}
		end = func(ctx context.Context) error { return c.ConfigSet(ctx, "maxmemory", "0").Err() }
	}
	if err := start(ctx); err != nil {
		return "lock server would not answer errors", fmt.Errorf("server-errors: %s: %w", mode, err)
	}
	wait.Sleep(ctx, d)
	// Once begun, carried through: a server left answering errors is a fault nobody
	// asked for.
	if err := end(context.WithoutCancel(ctx)); err != nil {
		return "lock server still answers errors", fmt.Errorf("server-errors: end %s: %w", mode, err)
	}
	return fmt.Sprintf("lock server answered %s for %s while %s holds the lock", what, d, who), nil
}

// The slowed reload: a filler key of fillBytes per keyDelay of loading, so that the
// server, which serves other clients once per loading-process-events-interval-bytes
// it reads, answers them LOADING at least once a key.
const (
	keyDelay  = 10 * time.Millisecond
	fillBytes = 1024
)

// reload makes the lock server load its dataset for about d, as after a restart or a
// full sync: DEBUG RELOAD saves it and loads it back, slowed to keyDelay a key over
// filler keys written for it. Every client meanwhile meets LOADING; the server comes
// back with its keys, less those that expired while it loaded (Redis skips them).
func reload(ctx context.Context, in *Injector, d time.Duration, who Who) (string, error) {
	c := in.srv.Admin
	n := max(1, int((d+keyDelay-1)/keyDelay))
	fill := in.prefix + ":reload-fill:"
	pipe := c.Pipeline()
	value := strings.Repeat("x", fillBytes)
	for i := range n {
		pipe.Set(ctx, fill+strconv.Itoa(i), value, 0)
	}
	pipe.ConfigSet(ctx, "loading-process-events-interval-bytes", strconv.Itoa(fillBytes))
	pipe.ConfigSet(ctx, "key-load-delay", strconv.FormatInt(keyDelay.Microseconds(), 10))
	if _, err := pipe.Exec(ctx); err != nil {
		return "lock server would not reload", fmt.Errorf("server-errors: loading: set up: %w", err)
	}
	// The reload answers once the load ends, unless that is past the client's read
	// timeout: then the load's end is when PING stops meeting LOADING.
	began, carry := time.Now(), context.WithoutCancel(ctx)
	reloaded := make(chan error, 1)
	go func() { reloaded <- c.Do(carry, "debug", "reload").Err() }()
	var loadErr error
	wait.Every(carry, 5*time.Millisecond, func() bool {
		if reloaded != nil {
			select {
			case loadErr = <-reloaded:
				reloaded = nil
				if !isTimeout(loadErr) {
					return false
				}
			default:
				return true
			}
		}
		err := c.Ping(carry).Err()
		return err != nil && strings.HasPrefix(err.Error(), "LOADING")
	})
	took := time.Since(began).Round(time.Millisecond)
	if loadErr != nil && !isTimeout(loadErr) {
		return "lock server would not reload", fmt.Errorf("server-errors: debug reload: %w", loadErr)
	}
	// Carried through as the other modes: the filler and the slowed load go.
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fill + strconv.Itoa(i)
	}
	pipe = c.Pipeline()
	pipe.ConfigSet(carry, "key-load-delay", "0")
	pipe.Del(carry, keys...)
	if _, err := pipe.Exec(carry); err != nil {
		return "lock server reloaded, its filler left", fmt.Errorf("server-errors: loading: clean up: %w", err)
	}
	return fmt.Sprintf("lock server answered LOADING for %s (DEBUG RELOAD of its keys and %d filler keys, %s a key) while %s holds the lock, and came back with its keys but those that expired meanwhile",
		took, n, keyDelay, who), nil
}

// isTimeout reports whether err is a client's read timing out, which a reload longer
// than the read timeout meets while the server goes on loading.
func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}
