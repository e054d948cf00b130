package servers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
)

// SentinelMaster is the name the sentinels know the master by.
const SentinelMaster = "stockbench"

// Sentinel timing: a master unanswered for sentinelDownAfter is down, and a failover
// that has not finished in sentinelFailoverTimeout is tried again. Production settings
// are in the tens of seconds; these are short so that a sale sees the failover through.
const (
	sentinelDownAfter       = time.Second
	sentinelFailoverTimeout = 3 * time.Second
)

// Sentinel is a master, its replica and three sentinels watching them (quorum 2), each
// a container of the harness's image on a private network of its own, as Debian's
// redis-sentinel would run them. Buyers reach it through go-redis's failover client, as
// a production application does: they ask the sentinels where the master is, and move
// when the sentinels say it moved.
type Sentinel struct {
	*group
	master    *node // the first master; it stays this node whatever a fault does
	replica   *node
	sentinels []*node
}

// StartSentinel starts the group from image (one with ip, from iproute2, to cut the
// master off: make redis-image builds one) and waits until the sentinels see the
// replica. Whatever it started is removed again when it fails.
func StartSentinel(ctx context.Context, image string) (_ *Sentinel, err error) {
	g, err := newGroup(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("sentinel: %w", err)
	}
	s := &Sentinel{group: g}
	defer func() {
		if err != nil {
			s.Close(context.WithoutCancel(ctx))
		}
	}()
	server := []string{"--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"}
	if s.master, err = s.start(ctx, server, nil); err != nil {
		return nil, fmt.Errorf("sentinel: master: %w", err)
	}
	conf := fmt.Sprintf("port 26379\nsentinel monitor %s %s 6379 2\nsentinel down-after-milliseconds %[1]s %[3]d\n"+
		"sentinel failover-timeout %[1]s %[4]d\nsentinel parallel-syncs %[1]s 1\n",
		SentinelMaster, s.master.ip, sentinelDownAfter.Milliseconds(), sentinelFailoverTimeout.Milliseconds())
	nodes := make([]*node, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range nodes {
		wg.Go(func() {
			if i == 0 {
				nodes[i], errs[i] = s.start(ctx, append(server, "--replicaof", s.master.ip, "6379"), nil)
				return
			}
			nodes[i], errs[i] = s.start(ctx, []string{"/data/sentinel.conf", "--sentinel"}, &conf)
		})
	}
	wg.Wait()
	s.replica, s.sentinels = nodes[0], nodes[1:]
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("sentinel: %w", err)
	}
	rc := redis.NewClient(&redis.Options{Addr: s.replica.addr("6379")})
	defer rc.Close()
	if err := await(ctx, 30*time.Second, "the replica to sync", func(ctx context.Context) (bool, error) {
		info, err := rc.Info(ctx, "replication").Result()
		return err == nil && strings.Contains(info, "master_link_status:up"), nil
	}); err != nil {
		return nil, err
	}
	if err := await(ctx, 30*time.Second, "the sentinels to see the replica", func(ctx context.Context) (bool, error) {
		for _, sn := range s.sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: sn.addr("26379")})
			rs, err := c.Replicas(ctx, SentinelMaster).Result()
			c.Close()
			if err != nil || len(rs) == 0 {
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return nil, err
	}
	return s, nil
}

// Client is a buyer's client of conns connections through the sentinels, set as the
// harness sets every client (see Target.options): it fails fast and never retries.
func (s *Sentinel) Client(conns int) redis.UniversalClient { return s.client(conns, -1) }

// Admin is the harness's own client, which reads the outcome: it retries, so that a
// read after a failover finds the new master.
func (s *Sentinel) Admin() redis.UniversalClient { return s.client(4, 5) }

func (s *Sentinel) client(conns, retries int) redis.UniversalClient {
	o := redis.UniversalOptions{MasterName: SentinelMaster}
	for _, sn := range s.sentinels {
		o.Addrs = append(o.Addrs, sn.addr("26379"))
	}
	o = clientOptions(o, conns, retries)
	return redis.NewUniversalClient(&o)
}

// Sentinels are the sentinels' addresses, for a client that follows the group itself
// (the master's name is SentinelMaster).
func (s *Sentinel) Sentinels() []string {
	var addrs []string
	for _, sn := range s.sentinels {
		addrs = append(addrs, sn.addr("26379"))
	}
	return addrs
}

// Addr is where the sentinels said the master is when the group started.
func (s *Sentinel) Addr() string { return s.master.addr("6379") }

// KillMaster kills the master's container, as a host crash would, and returns once a
// sentinel names its replica the master, saying how long that took.
func (s *Sentinel) KillMaster(ctx context.Context) (string, error) {
	ctx = context.WithoutCancel(ctx) // carried through: a half-failed-over group tells nothing
	began := time.Now()
	cli, err := dockerClient(ctx)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	if _, err := cli.ContainerKill(ctx, s.master.ctr.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return "", fmt.Errorf("sentinel: kill the master: %w", err)
	}
	if err := s.awaitPromotion(ctx); err != nil {
		return "master killed; " + err.Error(), err
	}
	return fmt.Sprintf("master killed; the sentinels promoted its replica %s later", time.Since(began).Round(time.Millisecond)), nil
}

// Partition cuts the master off the sentinels and the replica, but not off the buyers,
// who reach it from the host: a blackhole route inside the master's container for
// each of their addresses. The sentinels promote the replica; buyers still on the old
// master write to it. After d (or once the promotion is done, if later) the partition
// heals; the sentinels then turn the old master into a replica of the new one, which
// throws away what it took meanwhile.
func (s *Sentinel) Partition(ctx context.Context, d time.Duration) (string, error) {
	ctx = context.WithoutCancel(ctx)
	began := time.Now()
	peers := []*node{s.replica}
	peers = append(peers, s.sentinels...)
	route := func(verb string) error {
		for _, p := range peers {
			if err := s.master.exec(ctx, "ip", "route", verb, "blackhole", p.ip+"/32"); err != nil {
				return fmt.Errorf("sentinel: partition (ip route %s): %w", verb, err)
			}
		}
		return nil
	}
	if err := route("add"); err != nil {
		return "", err
	}
	perr := s.awaitPromotion(ctx)
	promoted := time.Since(began)
	if left := d - promoted; left > 0 {
		time.Sleep(left)
	}
	if err := route("del"); err != nil {
		return "", err
	}
	healed := time.Since(began)
	if perr != nil {
		return "master cut off; " + perr.Error(), perr
	}
	// The sentinels turn the old master into a replica in their own time (seconds to tens
	// of seconds); the sale reads its outcome from the new master meanwhile.
	return fmt.Sprintf("master cut off from the sentinels and its replica, not from the buyers; the replica promoted after %s; "+
		"healed after %s: the old master, once a replica, drops what it took meanwhile",
		promoted.Round(time.Millisecond), healed.Round(time.Millisecond)), nil
}

// awaitPromotion waits until every sentinel names the replica the master: a client asks
// one of them, and one that has not heard yet sends it to the old address.
func (s *Sentinel) awaitPromotion(ctx context.Context) error {
	want := s.replica.addr("6379")
	return await(ctx, 30*time.Second, "the sentinels to promote the replica", func(ctx context.Context) (bool, error) {
		agree := 0
		for _, sn := range s.sentinels {
			c := redis.NewSentinelClient(&redis.Options{Addr: sn.addr("26379"), DialTimeout: time.Second})
			addr, err := c.GetMasterAddrByName(ctx, SentinelMaster).Result()
			c.Close()
			if err == nil && len(addr) == 2 && net.JoinHostPort(addr[0], addr[1]) == want {
				agree++
			}
		}
		return agree == len(s.sentinels), nil
	})
}

// Synced waits until the replica has everything the master has written so far (the
// sale's set-up), so that a fault striking next tests the failover, not a replica that
// had yet to hear of the sale.
func (s *Sentinel) Synced(ctx context.Context) (string, error) {
	off, err := replicasHave(ctx, s.master.addr("6379"), 10*time.Second)
	if err != nil {
		return "", fmt.Errorf("sentinel: %w", err)
	}
	return fmt.Sprintf("the replica had the sale's set-up (replication offset %d) before the fault", off), nil
}
