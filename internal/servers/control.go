package servers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// control is what the harness can do to a server it started.
type control interface {
	pause(ctx context.Context) error
	resume(ctx context.Context) error
	kill(ctx context.Context) error
	// start starts the server again after kill, empty, and returns its address.
	start(ctx context.Context) (string, error)
}

// ErrNotOwned is returned by the fault operations on a server the harness did not start.
var ErrNotOwned = errors.New("target: the harness did not start this server")

// Pause stops the server for d and lets it go on: SIGSTOP and SIGCONT for a process,
// docker pause and unpause for a container. When ctx ends the pause ends early; the
// server is resumed either way, and neither step is cut off halfway (a pause request
// abandoned by its caller may still be carried out, with nobody left to resume).
func (t *Target) Pause(ctx context.Context, d time.Duration) error {
	if t.ctl == nil {
		return ErrNotOwned
	}
	if err := t.ctl.pause(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("target: pause: %w", err)
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	if err := t.ctl.resume(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("target: resume: %w", err)
	}
	return nil
}

// Kill stops the server at once, as a crash would.
func (t *Target) Kill(ctx context.Context) error {
	if t.ctl == nil {
		return ErrNotOwned
	}
	if err := t.ctl.kill(context.WithoutCancel(ctx)); err != nil { // a kill is never half done
		return fmt.Errorf("target: kill: %w", err)
	}
	t.dead.Store(true)
	return nil
}

// Restart kills the server, keeps it down for down (0: starts it again at once; a
// delayed restart, as the Redis docs prescribe for locks on servers without persistence,
// outlasts the longest lease), starts it again with what its persistence kept, and waits
// until it answers; clients follow it if its address changed, and their dials wait for
// it meanwhile. When ctx ends during the downtime the server starts at once; once begun
// the restart is carried through whatever ctx does: a server killed and never started
// again would be a fault nobody asked for.
func (t *Target) Restart(ctx context.Context, down time.Duration) error {
	if t.ctl == nil {
		return ErrNotOwned
	}
	kept := context.WithoutCancel(ctx)
	waiting := make(chan struct{})
	t.up.Store(&waiting)
	defer close(waiting) // whatever happens, dials stop waiting
	if err := t.Kill(kept); err != nil {
		return err
	}
	t.conns.closeAll()
	downtime := time.NewTimer(down)
	defer downtime.Stop()
	select {
	case <-downtime.C:
	case <-ctx.Done():
	}
	ctx = kept
	addr, err := t.ctl.start(ctx)
	if err != nil {
		return fmt.Errorf("target: restart: %w", err)
	}
	t.addr.Store(&addr)
	t.dead.Store(false)
	if s, ok := t.ctl.(*server); ok {
		t.Info.PID = s.pid()
	}
	return t.ready(ctx, 10*time.Second)
}

// RestartsInPlace reports whether Restart brings the server back at its address within
// milliseconds: a process, or a container whose image runs the keeper first
// (internal/servers/keeper). A container the engine must stop and start again is not.
func (t *Target) RestartsInPlace(ctx context.Context) bool {
	switch c := t.ctl.(type) {
	case *server:
		return true
	case *containerCtl:
		_, keeper := c.localPID(ctx)
		return keeper
	}
	return false
}

// Redirect points every client of t, existing and new, at addr, and closes the
// connections they have open, as a sentinel-aware client does on a failover: a dead
// container's address answers nothing, and commands on its connections would hang until
// they time out instead of failing at once.
func (t *Target) Redirect(addr string) {
	t.addr.Store(&addr)
	t.conns.closeAll()
}

// ReplicaOf makes t replicate primary and waits until the link is up.
func (t *Target) ReplicaOf(ctx context.Context, primary *Target) error {
	peer, err := primary.peerAddr(ctx)
	if err != nil {
		return err
	}
	pc := primary.Client(1)
	defer pc.Close()
	// Redis waits 5s for more replicas before a diskless sync; there are none to wait for.
	if err := pc.ConfigSet(ctx, "repl-diskless-sync-delay", "0").Err(); err != nil {
		return fmt.Errorf("target: replicaof: %w", err)
	}
	c := t.Client(1)
	defer c.Close()
	host, port, err := splitAddr(peer)
	if err != nil {
		return err
	}
	if err := c.SlaveOf(ctx, host, port).Err(); err != nil {
		return fmt.Errorf("target: replicaof: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		// The replica's link can be up before the primary counts it online (that waits
		// for the replica's first ACK), and WAIT counts only what the primary counts.
		info, err := c.Info(ctx, "replication").Result()
		pinfo, perr := pc.Info(ctx, "replication").Result()
		if err == nil && perr == nil && infoField(info, "master_link_status") == "up" &&
			strings.Contains(pinfo, "state=online") {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("target: replica of %s never caught up: %w", primary.Addr(), ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Detach stops t replicating and makes it a primary with the data it has: what a
// replica promoted before the latest writes reached it holds.
func (t *Target) Detach(ctx context.Context) error {
	c := t.Client(1)
	defer c.Close()
	if err := c.SlaveOf(ctx, "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("target: replicaof no one: %w", err)
	}
	return nil
}

// peerAddr is where another server the harness started reaches t: a container's own
// address on the bridge, which other containers reach even when this host cannot.
func (t *Target) peerAddr(ctx context.Context) (string, error) {
	if c, ok := t.ctl.(*containerCtl); ok {
		ip, err := c.ctr.ContainerIP(ctx)
		if err != nil {
			return "", fmt.Errorf("target: container address: %w", err)
		}
		return net.JoinHostPort(ip, "6379"), nil
	}
	return t.Addr(), nil
}
