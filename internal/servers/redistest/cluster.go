package redistest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers"
)

// Cluster starts a Redis Cluster of n masters, each a redis-server process on loopback
// (the nodes must reach each other at the addresses they announce, which containers on
// a bridge do not), with the hash slots split evenly; it returns their addresses and
// stops them when tb ends.
func Cluster(tb testing.TB, n int) []string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p := servers.Process{Binary: Config().Binary, Args: []string{
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000"}}
	addrs := make([]string, n)
	clients := make([]*redis.Client, n)
	for i := range n {
		t, err := p.Start(ctx)
		if err != nil {
			tb.Fatalf("start cluster node: %v", err)
		}
		tb.Cleanup(func() { t.Close(context.Background()) })
		addrs[i] = t.Info.Addr
		clients[i] = redis.NewClient(&redis.Options{Addr: t.Info.Addr})
		defer clients[i].Close()
	}
	const slots = 16384
	for i, c := range clients {
		lo, hi := i*slots/n, (i+1)*slots/n-1
		if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", lo, hi).Err(); err != nil {
			tb.Fatalf("cluster: add slots %d-%d to %s: %v", lo, hi, addrs[i], err)
		}
		if i > 0 {
			host, port, _ := net.SplitHostPort(addrs[i])
			if err := clients[0].Do(ctx, "CLUSTER", "MEET", host, port).Err(); err != nil {
				tb.Fatalf("cluster: meet %s: %v", addrs[i], err)
			}
		}
	}
	for i, c := range clients {
		if err := waitClusterOK(ctx, c, n); err != nil {
			tb.Fatalf("cluster: node %s: %v", addrs[i], err)
		}
	}
	tb.Logf("redis cluster: %s", strings.Join(addrs, " "))
	return addrs
}

// waitClusterOK waits until c sees the cluster whole: every slot served, n nodes known.
func waitClusterOK(ctx context.Context, c *redis.Client, n int) error {
	want := []string{"cluster_state:ok", fmt.Sprintf("cluster_known_nodes:%d", n)}
	var info string
	for {
		info, _ = c.ClusterInfo(ctx).Result()
		if strings.Contains(info, want[0]) && strings.Contains(info, want[1]) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not whole after a minute: %q", info)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
