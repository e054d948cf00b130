package salestest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/internal/servers/rig"
)

// Redis is where the kit's sales run: a server the kit started (a container when a Docker
// engine answers, else a redis-server process, as the stockbench command does), with the
// further servers the faults need started beside it on demand; or the user's own server,
// on which only the faults that need no server of their own run.
type Redis struct {
	h *rig.Harness
}

// StartRedis starts Redis for tb the way the stockbench command does, and stops it, and
// every server started beside it, when tb ends. It reads the command's environment:
// STOCKBENCH_REDIS (auto, container, process or external), STOCKBENCH_REDIS_IMAGE,
// STOCKBENCH_REDIS_SERVER, and STOCKBENCH_REDIS_URL for a server of your own (as UseRedis).
// It fails tb when no server can be had.
func StartRedis(tb testing.TB) *Redis {
	tb.Helper()
	return start(tb, servers.FromEnv())
}

// UseRedis uses your own Redis at url (redis://[user:pass@]host:port[/db]): only keys
// under each sale's prefix are touched, they carry a TTL while the sale runs, and
// nothing is flushed. The faults that act on servers need servers the kit starts, and
// are skipped.
func UseRedis(tb testing.TB, url string) *Redis {
	tb.Helper()
	return start(tb, servers.Config{URL: url})
}

var quietOnce sync.Once

func start(tb testing.TB, cfg servers.Config) *Redis {
	tb.Helper()
	// go-redis logs every refused dial, and the kit dials servers while they start; the
	// errors that matter reach the test as failures. Once: go-redis v9.22 keeps its
	// logger in a plain variable, which a parallel test's client may be reading.
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	p, err := cfg.Provider()
	if err != nil {
		tb.Fatalf("salestest: redis: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := rig.StartHarness(ctx, p, cfg)
	if err != nil {
		tb.Fatalf("salestest: start redis: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := h.Close(ctx); err != nil {
			tb.Errorf("salestest: stop redis: %v", err)
		}
	})
	tb.Logf("salestest: redis: %s", h.Shared.Info.Record())
	return &Redis{h: h}
}

// Addr is the address the shared server answers on.
func (r *Redis) Addr() string { return r.h.Shared.Addr() }

// Client returns a client of the shared server with a pool of conns connections; the
// caller closes it.
func (r *Redis) Client(conns int) redis.UniversalClient { return r.h.Shared.Client(conns) }

// Owned reports whether the kit started the server (and can start more), rather than
// being given one by STOCKBENCH_REDIS_URL.
func (r *Redis) Owned() bool { return r.h.Shared.Info.Owned }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
