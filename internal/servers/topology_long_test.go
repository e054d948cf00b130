//go:build long

package servers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cut off from its peers, the old master still takes a buyer's write, which the sentinels'
// A killed master is replaced by its replica, and the failover client follows: what was
// written before (and replicated) is still there.
func TestSentinelKill(t *testing.T) {
	s := topology(t, StartSentinel)
	ctx := context.Background()
	c := s.Client(2)
	defer c.Close()
	// WAIT counts its own connection's writes: the SET and the WAIT go out together.
	pipe := c.Pipeline()
	pipe.Set(ctx, "k", "v", 0)
	acked := pipe.Do(ctx, "wait", 1, 10000)
	if _, err := pipe.Exec(ctx); err != nil || acked.Val() != int64(1) {
		t.Fatalf("want the write on the replica, got %v, %v", acked.Val(), err)
	}
	detail, err := s.KillMaster(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(detail)
	var got string
	for range 50 {
		if got, err = c.Get(ctx, "k").Result(); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != "v" {
		t.Errorf("after the failover: want v, got %q (%v)", got, err)
	}
}

// new master never sees and which the old master drops when it rejoins.
func TestSentinelPartition(t *testing.T) {
	s := topology(t, StartSentinel)
	ctx := context.Background()
	c := s.Client(2)
	defer c.Close()
	old := s.master
	oc := redis.NewClient(&redis.Options{Addr: old.addr("6379")})
	defer oc.Close()
	done := make(chan string)
	go func() {
		d, err := s.Partition(ctx, 3*time.Second)
		if err != nil {
			t.Error(err)
		}
		done <- d
	}()
	// The write goes to the old master once nothing it sends reaches its replica.
	for !cut(ctx, s.master, s.replica) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := oc.Set(ctx, "split", "old side", 0).Err(); err != nil {
		t.Fatalf("the old master refused a buyer during the partition: %v", err)
	}
	t.Log(<-done)
	if n, err := c.Exists(ctx, "split").Result(); err != nil || n != 0 {
		t.Errorf("the write to the old master: want absent from the new master, got %d (%v)", n, err)
	}
	// The sentinels turn the old master into a replica, which drops the write.
	deadline := time.Now().Add(60 * time.Second)
	for {
		info, _ := oc.Info(ctx, "replication").Result()
		if strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the old master did not rejoin as a replica: %s", info)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n, _ := oc.Exists(ctx, "split").Result(); n != 0 {
		t.Error("the old master kept the write it took while cut off")
	}
}

// A slot migrated under a client is followed (ASK, then MOVED), keys and TTLs intact;
// a killed master's replica takes its slots over, with what it had replicated.
func TestClusterMigrateAndKill(t *testing.T) {
	c := topology(t, func(ctx context.Context, image string) (*Cluster, error) {
		return StartCluster(ctx, image, ClusterOptions{})
	})
	ctx := context.Background()
	if !c.listed(ctx) {
		t.Error("StartCluster returned before every master listed every replica in CLUSTER SLOTS")
	}
	cc := c.Client(2)
	defer cc.Close()
	if err := cc.Set(ctx, "{sale}:lock", "me", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	_, before, err := c.slot(ctx, "{sale}")
	if err != nil {
		t.Fatal(err)
	}
	detail, err := c.Migrate(ctx, "{sale}")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(detail)
	if _, after, _ := c.slot(ctx, "{sale}"); after == before {
		t.Error("the slot did not move")
	}
	if ttl := cc.PTTL(ctx, "{sale}:lock").Val(); ttl <= 0 || cc.Get(ctx, "{sale}:lock").Val() != "me" {
		t.Errorf("after the migration: want the lock with its TTL, got %q, %s", cc.Get(ctx, "{sale}:lock").Val(), ttl)
	}
	replicated(t, c, "{sale}:lock")
	detail, err = c.KillMaster(ctx, "{sale}")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(detail)
	admin := c.Admin()
	defer admin.Close()
	if got, err := admin.Get(ctx, "{sale}:lock").Result(); got != "me" {
		t.Errorf("after the failover: want the lock, got %q (%v)", got, err)
	}
}

// With late replicas, the clients map a cluster that lists none; KillMaster makes them
// replicas first, and the one of the killed master takes its slots over with the data.
func TestClusterLateReplicas(t *testing.T) {
	c := topology(t, func(ctx context.Context, image string) (*Cluster, error) {
		return StartCluster(ctx, image, ClusterOptions{LateReplicas: true})
	})
	ctx := context.Background()
	cc := c.Client(2)
	defer cc.Close()
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range slots {
		if len(r.Nodes) != 1 {
			t.Errorf("slots %d-%d: want the master alone in the map a client builds, got %v", r.Start, r.End, r.Nodes)
		}
	}
	if err := cc.Set(ctx, "{sale}:stock", "30", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if detail, err := c.Synced(ctx, "{sale}"); err != nil || !strings.Contains(detail, "replica=late") {
		t.Errorf("Synced: want it to say the replicas join at the strike, got %q, %v", detail, err)
	}
	detail, err := c.KillMaster(ctx, "{sale}")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(detail)
	if !strings.Contains(detail, "the replicas joined as the fault struck") {
		t.Errorf("want the detail to say when the replicas joined, got %q", detail)
	}
	admin := c.Admin()
	defer admin.Close()
	if got, err := admin.Get(ctx, "{sale}:stock").Result(); got != "30" {
		t.Errorf("after the failover: want the stock, got %q (%v)", got, err)
	}
}
