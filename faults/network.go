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
	for _, l := range in.srv.Links {
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
	if err := in.srv.LockLink.AddToxic("outage", "timeout", map[string]any{"timeout": 0}); err != nil {
		return err
	}
	wait.Sleep(ctx, d)
	return in.srv.LockLink.RemoveToxic("outage")
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
