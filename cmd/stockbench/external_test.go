package main

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers/redistest"
)

// TestExternal: pointed at a user's own Redis, or Redis Cluster, by URL, the harness runs
// sales and queues with the verdicts it gets on its own servers, touches only keys under
// its prefix, and leaves the user's keys and database as they were.
func TestExternal(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	single := redistest.Start(t).Info.Addr
	cluster := redistest.Cluster(t, 3)
	targets := []struct {
		name string
		args []string
		c    redis.UniversalClient
	}{
		{"server", []string{"--redis-url", "redis://" + single}, redis.NewClient(&redis.Options{Addr: single})},
		{"cluster", []string{"--redis-url", "redis://" + cluster[0] + "?addr=" + cluster[1] + "&addr=" + cluster[2], "--redis-cluster"},
			redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster})},
	}
	runs := []struct {
		args []string
		want string // the run's verdict class
	}{
		{[]string{"--lock", "lua", "--buyers", "300", "--stock", "50"}, "SAFE"},
		{[]string{"--lock", "token", "--buyers", "200", "--stock", "20"}, "SAFE"},
		{[]string{"--lock", "seed-setnx", "--buyers", "300", "--stock", "20"}, "OVERSOLD"},
		{[]string{"--queue", "stream", "--buyers", "300", "--stock", "50"}, "SAFE"},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			defer tg.c.Close()
			theirs := map[string]string{"orders": "theirs", "stock": "7", "{stockbench}:stock": "mine", "stockbench:x": "mine too"}
			for k, v := range theirs {
				if err := tg.c.Set(ctx, k, v, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range runs {
				out := t.TempDir()
				code, _, stderr := stockbench(t, append(append([]string{"run", "--out", out}, tg.args...), r.args...)...)
				if code != 0 {
					t.Fatalf("%v: exit %d:\n%s", r.args, code, stderr)
				}
				f := readRun(t, out, "summary.md")
				t.Logf("%v: %s in %s", r.args, f.Runs[0].Verdict, f.Runs[0].Duration.Round(time.Millisecond))
				if got := string(f.Runs[0].Verdict.Class); got != r.want || f.Target.Cluster != (tg.name == "cluster") {
					t.Errorf("%v: class %s (cluster %v), want %s", r.args, got, f.Target.Cluster, r.want)
				}
			}
			for k, v := range theirs {
				if got, err := tg.c.Get(ctx, k).Result(); got != v {
					t.Errorf("their key %q: %q (%v), want %q untouched", k, got, err, v)
				}
			}
			if n := dbSize(ctx, t, tg.c); n != int64(len(theirs)) {
				t.Errorf("%d keys left, want only their %d", n, len(theirs))
			}
		})
	}
}

// dbSize counts the keys of a server, or of every master of a cluster.
func dbSize(ctx context.Context, t *testing.T, c redis.UniversalClient) int64 {
	t.Helper()
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return c.DBSize(ctx).Val()
	}
	var n atomic.Int64
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		k, err := m.DBSize(ctx).Result()
		n.Add(k)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n.Load()
}
