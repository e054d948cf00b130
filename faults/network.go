package faults

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// latency delays every response on every link.
func (in *Injector) latency(f Fault) error {
	lat, jit := f.Latency, f.Jitter
	if lat == 0 {
		lat = 2 * time.Millisecond
	}
	if jit == 0 {
		jit = time.Millisecond
	}
	var errs []error
	for _, l := range in.srv.Links {
		errs = append(errs, l.AddToxic("latency", "latency", map[string]any{
			"latency": lat.Milliseconds(), "jitter": jit.Milliseconds(),
		}))
	}
	in.record(NetLatency, fmt.Sprintf("every response delayed %s ± %s", lat, jit), errors.Join(errs...))
	return errors.Join(errs...)
}

// outage stops all data to and from the lock server for d, or until ctx ends; what was
// sent meanwhile arrives once it ends.
func (in *Injector) outage(ctx context.Context, d time.Duration) error {
	if err := in.srv.LockLink.AddToxic("outage", "timeout", map[string]any{"timeout": 0}); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return in.srv.LockLink.RemoveToxic("outage")
}

// startEviction makes the lock server evict the keys with the shortest TTL first and
// keeps it past its memory limit until Stop: a writer adds large keys with a long TTL, so
// that few keys are ever there to sample and the lock, when sampled, goes first.
func (in *Injector) startEviction(ctx context.Context) error {
	c := in.srv.Admin
	used, err := usedMemory(ctx, c)
	if err != nil {
		return err
	}
	limit := used + 1<<20
	for _, kv := range [][2]string{
		{"maxmemory-policy", "volatile-ttl"}, {"maxmemory-samples", "10"}, {"maxmemory", strconv.FormatInt(limit, 10)},
	} {
		if err := c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			return err
		}
	}
	in.record(Evict, fmt.Sprintf("maxmemory %d bytes, volatile-ttl, filled with 100KB keys every 2ms", limit), nil)
	in.bg.Add(1)
	go func() {
		defer in.bg.Done()
		defer c.ConfigSet(context.WithoutCancel(ctx), "maxmemory", "0")
		filler := make([]byte, 100<<10)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-in.halt.Done():
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			c.Set(ctx, in.prefix+":fill:"+strconv.Itoa(i), filler, time.Hour)
		}
	}()
	return nil
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
