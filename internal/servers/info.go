package servers

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// infoField returns the value of field in an INFO reply, or "".
func infoField(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

// splitAddr splits host:port.
func splitAddr(addr string) (string, string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", "", fmt.Errorf("target: address %q: %w", addr, err)
	}
	return host, port, nil
}

// replicasHave waits until every replica of the master at addr has applied everything
// the master had written when it was asked (its replication offset), and returns that
// offset. A fault that kills or cuts off the master must strike a group whose replicas
// have the sale's starting state: else a promoted replica without the stock reads as a
// failover that lost it. Replicas are read directly (their own slave_repl_offset), not
// through the master's view, which hears of them only once a second.
func replicasHave(ctx context.Context, addr string, within time.Duration) (int64, error) {
	info, err := directInfo(ctx, addr)
	if err != nil {
		return 0, fmt.Errorf("read the master's replication offset: %w", err)
	}
	want, err := strconv.ParseInt(infoField(info, "master_repl_offset"), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("master at %s gave no replication offset: %w", addr, err)
	}
	var replicas []string
	for i := 0; ; i++ {
		r := infoField(info, fmt.Sprintf("slave%d", i)) // ip=...,port=...,state=...,offset=...
		if r == "" {
			break
		}
		var ip, port string
		for kv := range strings.SplitSeq(r, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "ip":
				ip = v
			case "port":
				port = v
			}
		}
		replicas = append(replicas, net.JoinHostPort(ip, port))
	}
	if len(replicas) == 0 {
		return want, fmt.Errorf("master at %s has no replica", addr)
	}
	for _, r := range replicas {
		err := await(ctx, within, "replica "+r+" to reach offset "+strconv.FormatInt(want, 10), func(ctx context.Context) (bool, error) {
			info, err := directInfo(ctx, r)
			if err != nil {
				return false, nil
			}
			have, err := strconv.ParseInt(infoField(info, "slave_repl_offset"), 10, 64)
			return err == nil && have >= want, nil
		})
		if err != nil {
			return want, err
		}
	}
	return want, nil
}

// directInfo reads INFO replication from the server at addr alone.
func directInfo(ctx context.Context, addr string) (string, error) {
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	return c.Info(ctx, "replication").Result()
}
