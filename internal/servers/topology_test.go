package servers

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// topology starts one for t on the test image with start, and removes it after t; it
// skips without a Docker engine. t runs in parallel with the other topologies' tests.
func topology[T interface{ Close(context.Context) error }](t *testing.T, start func(context.Context, string) (T, error)) T {
	t.Helper()
	// Each topology is containers on a network of its own, and its tests mostly wait on
	// the sentinels' and the cluster's timeouts: they run side by side.
	t.Parallel()
	ctx := context.Background()
	if err := dockerAnswers(ctx); err != nil {
		t.Skipf("no Docker engine answers: %v", err)
	}
	image := os.Getenv("STOCKBENCH_REDIS_IMAGE")
	if image == "" {
		image = DefaultImage
	}
	g, err := start(ctx, image)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return g
}

// replicated waits until a replica of c holds key.
func replicated(t *testing.T, c *Cluster, key string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range c.replicas {
			// One connection, so that READONLY covers the EXISTS.
			rc := redis.NewClient(&redis.Options{Addr: r.addr("6379"), PoolSize: 1})
			rc.Do(ctx, "readonly")
			n, _ := rc.Exists(ctx, key).Result()
			rc.Close()
			if n == 1 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no replica got %s", key)
}

// cut reports whether from has a blackhole route to to.
func cut(ctx context.Context, from, to *node) bool {
	code, out, err := from.ctr.Exec(ctx, []string{"ip", "route"})
	if err != nil || code != 0 {
		return false
	}
	b, _ := io.ReadAll(out)
	return strings.Contains(string(b), "blackhole "+to.ip)
}
