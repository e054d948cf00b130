// Package servers starts, or connects to, the Redis a run talks to: a container, a local
// redis-server process, or the user's own server, chosen by a [Provider]; or a Sentinel
// group or Redis Cluster of containers, for the faults of real topologies.
package servers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/results"
)

// Kind names how a target was obtained.
type Kind string

// The kinds of target.
const (
	KindContainer Kind = "container"
	KindProcess   Kind = "process"
	KindExternal  Kind = "external"
)

// Provider obtains a Redis server that answers PING.
type Provider interface {
	Start(ctx context.Context) (*Target, error)
}

// Info describes a target: what the harness knows of the server it talks to, which
// results.json records (see results.Target).
type Info struct {
	Kind Kind
	// Addr is the host:port clients dial (the first seed for a cluster); Detail says what
	// runs there (an image and container id, a binary, a URL); Why is set by Auto: why
	// this kind was chosen over the others.
	Addr, Detail, Why string
	// Owned is true when the harness started the server and stops it; an external
	// server is never flushed nor stopped. Cluster is true for a Redis Cluster.
	Owned, Cluster bool
	// Version is the server's redis_version.
	Version string
	// PID is the process target's server process; ContainerID the container target's
	// container.
	PID         int
	ContainerID string
}

// Record is what results.json records of the target.
func (i Info) Record() results.Target {
	return results.Target{Kind: string(i.Kind), Addr: i.Addr, Detail: i.Detail, Why: i.Why, Owned: i.Owned,
		Cluster: i.Cluster, Version: i.Version, PID: i.PID, ContainerID: i.ContainerID}
}

// Target is a Redis server that answered PING.
type Target struct {
	Info Info
	opts redis.UniversalOptions
	stop func(context.Context) error
	ctl  control // nil for an external server
	// addr is where clients dial now: a restart or a failover moves it.
	addr atomic.Pointer[string]
	// conns are the connections clients of t have open, closed when t moves.
	conns connSet
	// up is closed while the server is up; a restart swaps in an open one, on which new
	// dials wait.
	up atomic.Pointer[chan struct{}]
	// dead is set by Kill and cleared by Restart.
	dead atomic.Bool
	// clock is set for a server started with a movable clock (WithClock); offset is how
	// far JumpClock has moved it.
	clock  bool
	offset time.Duration
}

// Dead reports whether a fault killed the server for good.
func (t *Target) Dead() bool { return t.dead.Load() }

func newTarget(info Info, opts redis.UniversalOptions, stop func(context.Context) error, ctl control) *Target {
	t := &Target{Info: info, opts: opts, stop: stop, ctl: ctl}
	t.addr.Store(&info.Addr)
	up := make(chan struct{})
	close(up)
	t.up.Store(&up)
	if ctl != nil {
		// Dial wherever the server is now, so that clients made before a restart or a
		// failover follow it as a sentinel-aware client would. While the server restarts,
		// dials wait for it: failing them would trip go-redis's dial back-off, which keeps
		// a client away for a second after the server is back, and the verdict would be
		// about go-redis rather than the lock.
		t.opts.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
			select {
			case <-*t.up.Load():
			case <-ctx.Done():
				// The dial's own timeout may run out before a restart is over (2 to 5 s
				// in containers on a loaded machine): a failed dial would set go-redis's
				// pool backing off for a second after the server is back, and the victim
				// of the restart would write before anyone else got in. Wait on.
				if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return nil, ctx.Err()
				}
				select {
				case <-*t.up.Load():
				case <-time.After(restartWait):
					return nil, ctx.Err()
				}
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), t.opts.DialTimeout)
				defer cancel()
			}
			var d net.Dialer
			c, err := d.DialContext(ctx, network, t.Addr())
			if err != nil {
				return nil, err
			}
			return t.conns.track(c), nil
		}
	}
	return t
}

// restartWait is the longest a dial waits for a restarting server past its own timeout.
const restartWait = 30 * time.Second

// Addr is the address clients dial now.
func (t *Target) Addr() string { return *t.addr.Load() }

// Client returns a new client whose pool holds at most conns connections. Callers wait for
// a free connection as long as their context allows: a pool timeout would turn a queue of
// buyers into errors that the benchmark would then have to explain away. Commands are
// never retried by the client.
func (t *Target) Client(conns int) redis.UniversalClient {
	o := t.options(conns)
	return redis.NewUniversalClient(&o)
}

func (t *Target) options(conns int) redis.UniversalOptions { return clientOptions(t.opts, conns, -1) }

// clientOptions is o as the harness sets every client of its own: a pool of conns
// connections, retries as given (-1: none).
func clientOptions(o redis.UniversalOptions, conns, retries int) redis.UniversalOptions {
	o.PoolSize = conns
	o.MaxActiveConns = conns
	o.PoolTimeout = time.Hour
	o.ContextTimeoutEnabled = true
	// Pipelines share this bounded pool with single commands: go-redis v9.22 gives them a
	// pool of their own only when a pipeline buffer size is set, and none is.
	// No silent retries for buyers: a purchase script or a SET NX that timed out may have
	// run, and running it again would be the harness's oversell, not the lock's.
	o.MaxRetries = retries
	// A server that is gone should show as failures within seconds, not after go-redis's
	// five dials of five seconds each; all the servers here are local.
	o.DialerRetries = 1
	if o.DialTimeout == 0 {
		o.DialTimeout = 2 * time.Second
	}
	return o
}

// Close stops what the harness started and removes its files. It does nothing for an
// external server. Close is safe to call more than once.
func (t *Target) Close(ctx context.Context) error {
	if t == nil || t.stop == nil {
		return nil
	}
	stop := t.stop
	t.stop = nil
	return stop(ctx)
}

// ready pings the server until it answers or ctx ends, then fills in its version. It
// dials the server directly, past the gate a restart closes, with a new client for each
// try: a client whose dial failed waits a second before it dials again.
func (t *Target) ready(ctx context.Context, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error // the last failure that says more than "deadline exceeded"
	for {
		o := t.options(1)
		o.Dialer, o.Addrs = nil, []string{t.Addr()}
		c := redis.NewUniversalClient(&o)
		err := c.Ping(ctx).Err()
		if err == nil {
			t.Info.Version = serverVersion(ctx, c)
			c.Close()
			return nil
		}
		c.Close()
		if ctx.Err() == nil || last == nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redis at %s does not answer: %w", t.Addr(), last)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func serverVersion(ctx context.Context, c redis.UniversalClient) string {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return ""
	}
	return infoField(info, "redis_version")
}

// ClientDB is Client on database db of a single server.
func (t *Target) ClientDB(conns, db int) redis.UniversalClient {
	o := t.options(conns)
	o.DB = db
	return redis.NewUniversalClient(&o)
}

// ClientVia is Client, dialing addr instead of the server: a proxy in front of it.
func (t *Target) ClientVia(conns int, addr string) redis.UniversalClient {
	o := t.options(conns)
	o.Dialer = func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	return redis.NewUniversalClient(&o)
}
