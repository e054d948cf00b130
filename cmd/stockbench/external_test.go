package main

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
)

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
