// Package redistest starts Redis for tests the way the harness does: by servers.Config,
// read from the same environment variables the CLI reads (STOCKBENCH_REDIS,
// STOCKBENCH_REDIS_IMAGE, STOCKBENCH_REDIS_SERVER), so auto picks a container when a Docker
// engine answers and a redis-server process otherwise.
package redistest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers"
)

// Config is the target configuration tests use: the environment's, but never the user's
// own server (the tests start, stop, pause and flush theirs).
func Config() servers.Config {
	c := servers.FromEnv()
	c.URL = ""
	return c
}

// Start starts a Redis server for tb and stops it when tb ends. It fails the test when no
// server can be started.
func Start(tb testing.TB) *servers.Target {
	tb.Helper()
	p, err := Config().Provider()
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t, err := p.Start(ctx)
	if err != nil {
		tb.Fatalf("start redis: %v", err)
	}
	tb.Cleanup(func() {
		if err := t.Close(context.Background()); err != nil {
			tb.Errorf("stop redis: %v", err)
		}
	})
	tb.Logf("redis: %+v", t.Info)
	return t
}

// Shared returns one Redis server for the whole test binary, started on first use; the
// package's TestMain must call Main so that it is stopped. Tests sharing it use their own
// keys.
func Shared(tb testing.TB) *servers.Target {
	tb.Helper()
	t, err := shared()
	if err != nil {
		tb.Fatalf("start redis: %v", err)
	}
	return t
}

// SharedAddr is the address of the server Shared returns, for examples, which have no
// testing.TB; it panics when no server can be started.
func SharedAddr() string {
	t, err := shared()
	if err != nil {
		panic(fmt.Sprintf("start redis: %v", err))
	}
	return t.Addr()
}

func shared() (*servers.Target, error) {
	sharedOnce.once.Do(func() {
		p, err := Config().Provider()
		if err != nil {
			sharedOnce.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		sharedOnce.t, sharedOnce.err = p.Start(ctx)
	})
	return sharedOnce.t, sharedOnce.err
}

var sharedOnce struct {
	once sync.Once
	t    *servers.Target
	err  error
}

// quiet drops go-redis's own log lines, which faults provoke by the hundred; tests see
// the errors themselves.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// Main runs the tests and then stops the shared server.
func Main(m *testing.M) {
	redis.SetLogger(quiet{})
	code := m.Run()
	if sharedOnce.t != nil {
		sharedOnce.t.Close(context.Background())
	}
	os.Exit(code)
}
