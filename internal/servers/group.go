package servers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// group is the containers of one topology (a Sentinel group, a cluster) on a private
// network of their own: it starts them and removes every one it started, then the
// network.
type group struct {
	image string
	net   *Network
	mu    sync.Mutex
	all   []*testcontainers.DockerContainer
}

// newGroup makes the network of a group of image's containers.
func newGroup(ctx context.Context, image string) (*group, error) {
	quiet()
	if err := dockerAnswers(ctx); err != nil {
		return nil, fmt.Errorf("no Docker engine answers: %w", err)
	}
	reapOrphans(ctx)
	if err := ensureImage(ctx, image); err != nil {
		return nil, fmt.Errorf("image %s: %w", image, err)
	}
	n, err := NewNetwork(ctx)
	if err != nil {
		return nil, err
	}
	return &group{image: image, net: n}, nil
}

// node is one container of a topology, with its address on the topology's network.
type node struct {
	ctr *testcontainers.DockerContainer
	ip  string
}

func (n *node) addr(port string) string { return net.JoinHostPort(n.ip, port) }

// start starts one container of the group on its network, redis-server with args; conf,
// when set, is written to /data/sentinel.conf first (a sentinel rewrites it as it learns).
func (s *group) start(ctx context.Context, args []string, conf *string) (*node, error) {
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithEntrypoint("redis-server"),
		testcontainers.WithCmd(args...),
		testcontainers.WithLabels(ownLabels()),
		network.WithNetworkName(nil, s.net.Name()),
		// NET_ADMIN: a partition is a blackhole route inside the container itself. No port
		// is published: the nodes are reached at their addresses on the group's network,
		// and a host port drawn for each of a dozen containers once collided with one in
		// use ("bind: address already in use").
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.CapAdd = []string{"NET_ADMIN"}
			hc.PublishAllPorts, hc.PortBindings = false, nil
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("Ready to accept connections").WithStartupTimeout(30 * time.Second)),
	}
	if conf != nil {
		opts = append(opts,
			testcontainers.WithFiles(testcontainers.ContainerFile{Reader: strings.NewReader(*conf), ContainerFilePath: "/data/sentinel.conf", FileMode: 0o666}),
			testcontainers.WithWaitStrategy(wait.ForLog("+monitor master").WithStartupTimeout(30*time.Second)))
	}
	ctr, err := s.run(ctx, opts)
	if err != nil {
		return nil, err
	}
	inspect, err := ctr.Inspect(ctx)
	if err != nil {
		return nil, err
	}
	ep, ok := inspect.NetworkSettings.Networks[s.net.Name()]
	if !ok || !ep.IPAddress.IsValid() {
		return nil, fmt.Errorf("container %s has no address on %s", ctr.GetContainerID()[:12], s.net.Name())
	}
	return &node{ctr: ctr, ip: ep.IPAddress.String()}, nil
}

// run runs one container of the group, kept in s.all to be removed at Close whether it
// started or not. The engine still drew a host port for some (an analysis of Sidekiq
// over Sentinel on 2026-12-04: "Error starting userland proxy: listen tcp4
// 0.0.0.0:34368: bind: address already in use"), a collision with a port just taken: such
// a start is tried again, three times in all.
func (s *group) run(ctx context.Context, opts []testcontainers.ContainerCustomizer) (*testcontainers.DockerContainer, error) {
	for try := 1; ; try++ {
		ctr, err := testcontainers.Run(context.WithoutCancel(ctx), s.image, opts...)
		if ctr != nil {
			s.mu.Lock()
			s.all = append(s.all, ctr)
			s.mu.Unlock()
		}
		if err == nil || try == 3 || !strings.Contains(err.Error(), "address already in use") {
			return ctr, err
		}
	}
}

// await polls done every 100ms until it holds, fails, or limit passes.
func await(ctx context.Context, limit time.Duration, what string, done func(context.Context) (bool, error)) error {
	deadline := time.Now().Add(limit)
	for {
		ok, err := done(ctx)
		switch {
		case err != nil:
			return err
		case ok:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("waited %s for %s", limit, what)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exec runs cmd inside n's container and fails on a non-zero exit.
func (n *node) exec(ctx context.Context, cmd ...string) error {
	code, out, err := n.ctr.Exec(ctx, cmd)
	if err != nil {
		return err
	}
	if code != 0 {
		b, _ := io.ReadAll(out)
		return fmt.Errorf("%s exited %d: %s", strings.Join(cmd, " "), code, strings.TrimSpace(string(b)))
	}
	return nil
}

// Close removes every container of the group, then its network.
func (s *group) Close(ctx context.Context) error {
	s.mu.Lock()
	all := s.all
	s.all = nil
	s.mu.Unlock()
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, c := range all {
		wg.Go(func() { errs[i] = c.Terminate(ctx, testcontainers.StopTimeout(0)) })
	}
	wg.Wait()
	return errors.Join(append(errs, s.net.Remove(ctx))...)
}
