package servers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
)

// clusterNodeTimeout is how long a master may not answer before its replica takes over.
// Production settings are 15 s or more; this is short so that a sale sees it through.
const clusterNodeTimeout = time.Second

// Cluster is a Redis Cluster of three masters with a replica each, every one a
// container of the harness's image on a private network of its own. Buyers reach it
// through go-redis's cluster client, which follows MOVED and ASK.
type Cluster struct {
	*group
	masters, replicas []*node
	mu                sync.Mutex
	ids               map[*node]string
	dead              map[*node]bool
	// detached: the replicas are in the cluster but replicate no master yet
	// (ClusterOptions.LateReplicas), until KillMaster gives them their masters.
	detached bool
}

// ClusterOptions shape a cluster. The zero value is the cluster every client maps
// whole.
type ClusterOptions struct {
	// LateReplicas: the replicas join the cluster as replicas only when KillMaster
	// strikes, after the buyers' clients mapped it, as a replica added to a running
	// cluster does; a client that maps once knows no replica of the master that fails.
	// Default false: StartCluster returns once every master lists every replica in
	// CLUSTER SLOTS, the map clients build.
	LateReplicas bool
}

// StartCluster starts the six nodes, hands each master a third of the slots, joins
// them and gives each master its replica, and returns once every node sees the cluster
// whole and every master lists every replica in its slot map. Whatever it started is
// removed again when it fails.
//
// The listing is awaited because Redis 7 leaves a replica out of CLUSTER SLOTS until a
// master hears, by the cluster bus, that it has replicated something: about 4 s after
// the replicas synced here, when the masters' first replication PING came 10 s after
// their start. A client that mapped the cluster inside that window knew no replica
// (phpredis 5.3.7 then crashes on the failover), one that mapped after it did: a
// sale's verdict then turned on when its processes started. Masters ping their
// replicas every second here (repl-ping-replica-period), so the listing comes at once,
// and sync them without waiting 5 s for more replicas (repl-diskless-sync-delay).
func StartCluster(ctx context.Context, image string, o ClusterOptions) (_ *Cluster, err error) {
	g, err := newGroup(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c := &Cluster{group: g, ids: make(map[*node]string), dead: make(map[*node]bool)}
	defer func() {
		if err != nil {
			c.Close(context.WithoutCancel(ctx))
		}
	}()
	args := []string{"--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no",
		"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", fmt.Sprint(clusterNodeTimeout.Milliseconds()), "--repl-ping-replica-period", "1",
		"--repl-diskless-sync-delay", "0"}
	nodes := make([]*node, 6)
	errs := make([]error, 6)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() { nodes[i], errs[i] = c.start(ctx, args, nil) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	c.masters, c.replicas = nodes[:3], nodes[3:]
	for _, n := range nodes {
		id, err := c.do(ctx, n, "cluster", "myid").Text()
		if err != nil {
			return nil, fmt.Errorf("cluster: myid: %w", err)
		}
		c.ids[n] = id
	}
	for i, m := range c.masters {
		lo, hi := i*16384/3, (i+1)*16384/3-1
		if err := c.do(ctx, m, "cluster", "addslotsrange", lo, hi).Err(); err != nil {
			return nil, fmt.Errorf("cluster: addslotsrange: %w", err)
		}
	}
	for _, n := range nodes[1:] {
		if err := c.do(ctx, nodes[0], "cluster", "meet", n.ip, 6379).Err(); err != nil {
			return nil, fmt.Errorf("cluster: meet: %w", err)
		}
	}
	if err := await(ctx, 30*time.Second, "every node to know the others", func(ctx context.Context) (bool, error) {
		return c.everyNode(ctx, func(info string) bool { return strings.Count(strings.TrimSpace(info), "\n") == 5 }, "cluster", "nodes"), nil
	}); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if o.LateReplicas {
		c.detached = true
		if err := await(ctx, 30*time.Second, "the cluster to be whole", func(ctx context.Context) (bool, error) {
			return c.everyNode(ctx, func(info string) bool { return strings.Contains(info, "cluster_state:ok") }, "cluster", "info"), nil
		}); err != nil {
			return nil, fmt.Errorf("cluster: %w", err)
		}
		return c, nil
	}
	if err := c.attach(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// attach gives each master its replica and returns once the cluster is whole, every
// replica in sync and listed by every live master in CLUSTER SLOTS.
func (c *Cluster) attach(ctx context.Context) error {
	for i, r := range c.replicas {
		if c.isDead(c.masters[i]) {
			continue
		}
		if err := c.do(ctx, r, "cluster", "replicate", c.ids[c.masters[i]]).Err(); err != nil {
			return fmt.Errorf("cluster: replicate: %w", err)
		}
	}
	if err := await(ctx, 30*time.Second, "the cluster to be whole, every replica in sync and in every master's slot map", func(ctx context.Context) (bool, error) {
		ok := c.everyNode(ctx, func(info string) bool { return strings.Contains(info, "cluster_state:ok") }, "cluster", "info")
		for i, r := range c.replicas {
			if c.isDead(c.masters[i]) {
				continue
			}
			info, err := c.do(ctx, r, "info", "replication").Text()
			ok = ok && err == nil && strings.Contains(info, "master_link_status:up")
		}
		return ok && c.listed(ctx), nil
	}); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.mu.Lock()
	c.detached = false
	c.mu.Unlock()
	return nil
}

// listed reports whether every live master's CLUSTER SLOTS names a replica beside each
// live master: the map a client builds then knows every replica.
func (c *Cluster) listed(ctx context.Context) bool {
	for _, m := range c.masters {
		if c.isDead(m) {
			continue
		}
		rc := redis.NewClient(&redis.Options{Addr: m.addr("6379"), DialTimeout: time.Second, MaxRetries: -1})
		ranges, err := rc.ClusterSlots(ctx).Result()
		rc.Close()
		if err != nil {
			return false
		}
		for _, r := range ranges {
			if len(r.Nodes) < 2 {
				return false
			}
		}
	}
	return true
}

// do runs one command on node n alone.
func (c *Cluster) do(ctx context.Context, n *node, args ...any) *redis.Cmd {
	rc := redis.NewClient(&redis.Options{Addr: n.addr("6379"), DialTimeout: time.Second, MaxRetries: -1})
	defer rc.Close()
	return rc.Do(ctx, args...)
}

// everyNode reports whether every live node's reply to args satisfies ok.
func (c *Cluster) everyNode(ctx context.Context, ok func(string) bool, args ...any) bool {
	for _, n := range append(append([]*node{}, c.masters...), c.replicas...) {
		if c.isDead(n) {
			continue
		}
		s, err := c.do(ctx, n, args...).Text()
		if err != nil || !ok(s) {
			return false
		}
	}
	return true
}

func (c *Cluster) isDead(n *node) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead[n]
}

// Addr is the first master's address, a seed for clients.
// Seeds are the masters' addresses, for a client that follows the cluster itself.
func (c *Cluster) Seeds() []string {
	var addrs []string
	for _, m := range c.masters {
		addrs = append(addrs, m.addr("6379"))
	}
	return addrs
}

func (c *Cluster) Addr() string { return c.masters[0].addr("6379") }

// Client is a buyer's cluster client of conns connections per node, set as the harness
// sets every client (see Target.options): it fails fast and never retries, though it
// follows the redirections a cluster answers with.
func (c *Cluster) Client(conns int) redis.UniversalClient { return c.client(conns, -1) }

// Admin is the harness's own client, which reads the outcome: it retries, so that a
// read after a failover finds the new master.
func (c *Cluster) Admin() redis.UniversalClient { return c.client(4, 5) }

func (c *Cluster) client(conns, retries int) redis.UniversalClient {
	o := redis.UniversalOptions{IsClusterMode: true}
	for _, m := range c.masters {
		o.Addrs = append(o.Addrs, m.addr("6379"))
	}
	o = clientOptions(o, conns, retries)
	return redis.NewUniversalClient(&o)
}

// slot is the slot of key, and the node that serves it now, as a live node sees it.
func (c *Cluster) slot(ctx context.Context, key string) (int64, *node, error) {
	var ask *node
	for _, m := range c.masters {
		if !c.isDead(m) {
			ask = m
			break
		}
	}
	slot, err := c.do(ctx, ask, "cluster", "keyslot", key).Int64()
	if err != nil {
		return 0, nil, fmt.Errorf("cluster: keyslot: %w", err)
	}
	owner, err := c.owner(ctx, ask, slot)
	return slot, owner, err
}

// owner is the node that ask says serves slot.
func (c *Cluster) owner(ctx context.Context, ask *node, slot int64) (*node, error) {
	rc := redis.NewClient(&redis.Options{Addr: ask.addr("6379"), DialTimeout: time.Second, MaxRetries: -1})
	defer rc.Close()
	ranges, err := rc.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, fmt.Errorf("cluster: slots: %w", err)
	}
	for _, r := range ranges {
		if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
			for _, n := range append(append([]*node{}, c.masters...), c.replicas...) {
				if n.addr("6379") == r.Nodes[0].Addr {
					return n, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("cluster: no node serves slot %d", slot)
}

// KillMaster kills the master that serves key's slot, as a host crash would, and
// returns once the other nodes name its replica the slot's master, saying how long that
// took. Late replicas (ClusterOptions) first join, and have the master's data, then.
func (c *Cluster) KillMaster(ctx context.Context, key string) (string, error) {
	ctx = context.WithoutCancel(ctx)
	began := time.Now()
	slot, victim, err := c.slot(ctx, key)
	if err != nil {
		return "", err
	}
	joined := ""
	c.mu.Lock()
	late := c.detached
	c.mu.Unlock()
	if late {
		if err := c.attach(ctx); err != nil {
			return "", err
		}
		off, err := replicasHave(ctx, victim.addr("6379"), 10*time.Second)
		if err != nil {
			return "", fmt.Errorf("cluster: %w", err)
		}
		joined = fmt.Sprintf("the replicas joined as the fault struck, after the buyers' clients had mapped the cluster, "+
			"and had the master's data (replication offset %d) %s later; ", off, time.Since(began).Round(time.Millisecond))
		began = time.Now()
	}
	cli, err := dockerClient(ctx)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	if _, err := cli.ContainerKill(ctx, victim.ctr.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return "", fmt.Errorf("cluster: kill the master: %w", err)
	}
	c.mu.Lock()
	c.dead[victim] = true
	c.mu.Unlock()
	err = await(ctx, 30*time.Second, "a replica to take the slot over", func(ctx context.Context) (bool, error) {
		_, owner, err := c.slot(ctx, key)
		return err == nil && owner != victim && c.everyNode(ctx, func(info string) bool { return strings.Contains(info, "cluster_state:ok") }, "cluster", "info"), nil
	})
	detail := fmt.Sprintf("%sthe master of slot %d (the sale's keys) killed", joined, slot)
	if err != nil {
		return detail, fmt.Errorf("cluster: %w", err)
	}
	return fmt.Sprintf("%s; its replica took the slot over %s later", detail, time.Since(began).Round(time.Millisecond)), nil
}

// Migrate moves key's slot to another master while buyers use it, as redis-cli
// --cluster reshard does: the target imports, the source migrates, the keys go over by
// MIGRATE (clients meanwhile get ASK for the keys already moved and TRYAGAIN for a
// command over keys on both sides), then every master is told the slot's new node (and
// clients get MOVED).
func (c *Cluster) Migrate(ctx context.Context, key string) (string, error) {
	ctx = context.WithoutCancel(ctx)
	began := time.Now()
	slot, from, err := c.slot(ctx, key)
	if err != nil {
		return "", err
	}
	var to *node
	for _, m := range c.masters {
		if m != from && !c.isDead(m) {
			to = m
			break
		}
	}
	if to == nil {
		return "", errors.New("cluster: no other master to migrate to")
	}
	step := func(n *node, args ...any) error {
		if err := c.do(ctx, n, args...).Err(); err != nil {
			return fmt.Errorf("cluster: migrate slot %d: %v: %w", slot, args, err)
		}
		return nil
	}
	if err := step(to, "cluster", "setslot", slot, "importing", c.ids[from]); err != nil {
		return "", err
	}
	if err := step(from, "cluster", "setslot", slot, "migrating", c.ids[to]); err != nil {
		return "", err
	}
	moved := 0
	for {
		keys, err := c.do(ctx, from, "cluster", "getkeysinslot", slot, 100).StringSlice()
		if err != nil {
			return "", fmt.Errorf("cluster: getkeysinslot: %w", err)
		}
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", to.ip, 6379, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		if err := step(from, args...); err != nil {
			return "", err
		}
		moved += len(keys)
	}
	for _, n := range append([]*node{to, from}, c.masters...) {
		if c.isDead(n) {
			continue
		}
		if err := step(n, "cluster", "setslot", slot, "node", c.ids[to]); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("slot %d (the sale's keys) migrated to another master: %d keys moved in %s", slot, moved,
		time.Since(began).Round(time.Millisecond)), nil
}

// Synced waits until the replicas of the master of key's slot have everything it has
// written so far (the sale's set-up): see Sentinel.Synced.
func (c *Cluster) Synced(ctx context.Context, key string) (string, error) {
	c.mu.Lock()
	late := c.detached
	c.mu.Unlock()
	if late {
		return "the replicas join when the fault strikes (replica=late): the buyers' clients map a cluster with no replica", nil
	}
	slot, m, err := c.slot(ctx, key)
	if err != nil {
		return "", err
	}
	off, err := replicasHave(ctx, m.addr("6379"), 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("cluster: %w", err)
	}
	return fmt.Sprintf("the replica of slot %d's master had the sale's set-up (replication offset %d) before the fault", slot, off), nil
}
