package servers

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	mobynet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	tclog "github.com/testcontainers/testcontainers-go/log"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// DefaultImage is the image Container runs when none is named. Machines whose engine
// reaches no registry build a local one instead (make redis-image) and name it.
const DefaultImage = "redis:7"

// Labels on every container the harness starts, so that a later run can remove the
// containers of a harness that was killed before it could (Ryuk, testcontainers' own
// reaper, is off: its image cannot be pulled everywhere).
const (
	labelOwner = "org.stockbench"
	labelPID   = "org.stockbench.pid"
	labelHost  = "org.stockbench.host"
	// labelStart is the owner's start time, so a pid reused by another process does
	// not keep an orphan alive (pid_max is 32768 on many machines and wraps quickly).
	labelStart = "org.stockbench.start"
)

// Container starts Redis in a container through testcontainers-go, with its port
// published on the host's loopback only.
type Container struct {
	// Image is the Redis image. Default: DefaultImage.
	Image string
	// Args are extra server arguments, such as "--maxmemory", "10mb".
	Args []string
	// Network, when set, is the Docker network the container joins instead of the
	// default bridge. Default: the default bridge.
	Network string
	// Clock starts the server with a wall clock Target.JumpClock can move. Default: the
	// host's clock.
	Clock bool
}

var _ Provider = Container{}

var quietOnce sync.Once

// quiet turns off what testcontainers would print on its own and Ryuk, unless the user
// asked for Ryuk explicitly: the harness removes its own containers.
func quiet() {
	quietOnce.Do(func() {
		if _, set := os.LookupEnv("TESTCONTAINERS_RYUK_DISABLED"); !set {
			os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
		}
		tclog.SetDefault(tclog.NewNoopLogger())
	})
}

// Start implements [Provider].
func (c Container) Start(ctx context.Context) (*Target, error) {
	quiet()
	image := c.Image
	if image == "" {
		image = DefaultImage
	}
	if err := dockerAnswers(ctx); err != nil {
		return nil, fmt.Errorf("container: no Docker engine answers: %w", err)
	}
	reapOrphans(ctx)
	if err := ensureImage(ctx, image); err != nil {
		return nil, fmt.Errorf("container: image %s is not on this engine and could not be pulled (make redis-image builds a local one; or name another image): %w", image, err)
	}
	args := append([]string{"--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no"}, c.Args...)
	port := mobynet.MustParsePort("6379/tcp")
	opts := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithCmd(args...),
		testcontainers.WithLabels(ownLabels()),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = mobynet.PortMap{port: {{HostIP: netip.MustParseAddr("127.0.0.1")}}}
		}),
		testcontainers.WithWaitStrategy(wait.ForLog("Ready to accept connections").WithStartupTimeout(30 * time.Second)),
	}
	if c.Network != "" {
		opts = append(opts, network.WithNetworkName(nil, c.Network))
	}
	if c.Clock {
		shimPath, err := clockShim()
		if err != nil {
			return nil, fmt.Errorf("container: %w", err)
		}
		opts = append(opts, testcontainers.WithFiles(testcontainers.ContainerFile{HostFilePath: shimPath, ContainerFilePath: containerShim, FileMode: 0o755}),
			testcontainers.WithEnv(map[string]string{"LD_PRELOAD": containerShim, "STOCKCLOCK_FILE": containerClock}))
	}
	// Not cut off by ctx: a create request abandoned halfway can still make a container
	// the daemon then starts with nobody to remove it. It is removed below instead.
	ctr, err := testcontainers.Run(context.WithoutCancel(ctx), image, opts...)
	stop := func(ctx context.Context) error {
		if ctr == nil {
			return nil
		}
		if err := ctr.Terminate(ctx, testcontainers.StopTimeout(2*time.Second)); err != nil {
			return fmt.Errorf("container: terminate %s: %w", ctr.GetContainerID()[:12], err)
		}
		return nil
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("container: run %s: %w", image, err)
	}
	ctl := &containerCtl{ctr: ctr}
	addr, via, err := ctl.address(ctx)
	if err != nil {
		stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("container: %w", err)
	}
	ctl.addr = addr
	t := newTarget(Info{Kind: KindContainer, Addr: addr, Owned: true, ContainerID: ctr.GetContainerID(),
		Detail: fmt.Sprintf("%s (container %s, %s)", image, ctr.GetContainerID()[:12], via)},
		redis.UniversalOptions{Addrs: []string{addr}}, stop, ctl)
	t.clock = c.Clock
	if err := t.ready(ctx, 10*time.Second); err != nil {
		t.Close(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("container: %w", err)
	}
	return t, nil
}

// containerCtl acts on a running container through the Docker API.
type containerCtl struct {
	ctr *testcontainers.DockerContainer
	// addr is where the host reaches the server; a restart inside the container keeps it.
	addr string
}

var _ control = (*containerCtl)(nil)

func (c *containerCtl) docker(ctx context.Context, act func(cli *testcontainers.DockerClient, id string) error) error {
	cli, err := dockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	return act(cli, c.ctr.GetContainerID())
}

func (c *containerCtl) setClock(ctx context.Context, offset time.Duration) error {
	return c.ctr.CopyToContainer(ctx, []byte(strconv.FormatInt(int64(offset), 10)), containerClock, 0o644)
}

func (c *containerCtl) pause(ctx context.Context) error {
	return c.docker(ctx, func(cli *testcontainers.DockerClient, id string) error {
		_, err := cli.ContainerPause(ctx, id, client.ContainerPauseOptions{})
		return err
	})
}

func (c *containerCtl) resume(ctx context.Context) error {
	return c.docker(ctx, func(cli *testcontainers.DockerClient, id string) error {
		_, err := cli.ContainerUnpause(ctx, id, client.ContainerUnpauseOptions{})
		return err
	})
}

// kill kills the container's server. With a local engine it sends SIGKILL to the
// server's process itself, which lands at once: the engine's kill took 50 ms to seconds
// on a loaded machine, long enough for a queue sale's workers to drain the queue the
// kill was meant to empty. Under the image's keeper (internal/servers/keeper) only the
// server dies and the container stays; otherwise it waits until the engine has seen the
// exit, so that a start that follows starts it again.
func (c *containerCtl) kill(ctx context.Context) error {
	if first, keeper := c.localPID(ctx); keeper {
		if server := childOf(first); server > 0 {
			return killAndReap(ctx, server)
		}
		return nil // already dead, killed before (a rolling restart's kill, then its restart)
	} else if first > 0 {
		if p, err := os.FindProcess(first); err == nil && p.Kill() == nil {
			return await(ctx, 30*time.Second, "the engine to see the server killed", func(ctx context.Context) (bool, error) {
				st, err := c.ctr.State(ctx)
				return err == nil && !st.Running, nil
			})
		}
	}
	return c.docker(ctx, func(cli *testcontainers.DockerClient, id string) error {
		_, err := cli.ContainerKill(ctx, id, client.ContainerKillOptions{Signal: "KILL"})
		return err
	})
}

// localPID is the host's pid of the container's first process when the engine runs on
// this machine and that process is this container's redis-server or the keeper running
// it (keeper true); 0 otherwise.
func (c *containerCtl) localPID(ctx context.Context) (pid int, keeper bool) {
	st, err := c.ctr.State(ctx)
	if err != nil || !st.Running || st.Pid <= 0 {
		return 0, false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", st.Pid))
	if err != nil || !strings.Contains(string(cmdline), "redis-server") {
		return 0, false
	}
	return st.Pid, strings.HasSuffix(strings.SplitN(string(cmdline), "\x00", 2)[0], keeperName)
}

// keeperName is the keeper's file name in the harness's image (scripts/redis-image.sh).
const keeperName = "stockbench-keeper"

// childOf is the first child the host sees of process pid, 0 if none: the keeper's server.
// Each of a process's threads lists the children it forked, and a Go program forks from any.
func childOf(pid int) int {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			if child, err := strconv.Atoi(f[0]); err == nil {
				return child
			}
		}
	}
	return 0
}

// killAndReap kills process pid and waits until its parent has reaped it, so that a
// start that follows does not find the old server's port still taken.
func killAndReap(ctx context.Context, pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := p.Kill(); err != nil {
		return fmt.Errorf("kill the server (pid %d): %w", pid, err)
	}
	// Polled at 2 ms, not at await's 100: a restart's downtime is the fault's, and the
	// keeper reaps within a millisecond or two.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return nil
		}
	}
	return fmt.Errorf("the keeper never reaped the killed server (pid %d) in 30s", pid)
}

// start starts the server again: the keeper is asked with SIGHUP, the address unchanged;
// a stopped container is started by the engine, and may come back at another address.
func (c *containerCtl) start(ctx context.Context) (string, error) {
	if first, keeper := c.localPID(ctx); keeper {
		p, err := os.FindProcess(first)
		if err == nil {
			err = p.Signal(syscall.SIGHUP)
		}
		if err != nil {
			return "", fmt.Errorf("ask the keeper for the server: %w", err)
		}
		return c.addr, nil
	}
	err := c.docker(ctx, func(cli *testcontainers.DockerClient, id string) error {
		_, err := cli.ContainerStart(ctx, id, client.ContainerStartOptions{})
		return err
	})
	if err != nil {
		return "", err
	}
	addr, _, err := c.address(ctx)
	c.addr = addr
	return addr, err
}

// address is where the host reaches the container's Redis: its bridge address when the
// host can reach it, as it can with a local engine on Linux, else the port published on
// 127.0.0.1. The bridge address skips docker-proxy, which on a 2-core machine costs more
// than half of Redis's throughput and would be measured as the lock's cost.
func (c *containerCtl) address(ctx context.Context) (addr, via string, err error) {
	if direct, ok := bridgeAddr(ctx, c.ctr); ok {
		return direct, "bridge address", nil
	}
	mapped, err := c.ctr.MappedPort(ctx, "6379/tcp")
	if err != nil {
		return "", "", fmt.Errorf("mapped port: %w", err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(int(mapped.Num()))), "published port", nil
}

// bridgeAddr returns the container's own address when this host can reach it.
func bridgeAddr(ctx context.Context, ctr *testcontainers.DockerContainer) (string, bool) {
	ip, err := ctr.ContainerIP(ctx)
	if err != nil || ip == "" {
		return "", false
	}
	addr := net.JoinHostPort(ip, "6379")
	for range 5 { // the bridge can lag the container's start by a moment
		conn, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
		if err == nil {
			conn.Close()
			return addr, true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", false
}

// dockerClient returns a Docker client. It is made with ctx's values but never its end:
// testcontainers reads the engine's socket once per process, and panics when that first
// read is cut off (Ctrl-C during start-up crashed the harness).
func dockerClient(ctx context.Context) (*testcontainers.DockerClient, error) {
	return testcontainers.NewDockerClientWithOpts(context.WithoutCancel(ctx))
}

// dockerAnswers reports whether a Docker engine answers a ping within a few seconds.
func dockerAnswers(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cli, err := dockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	_, err = cli.Ping(ctx, client.PingOptions{})
	return err
}

// ensureImage pulls image unless the engine has it, once: testcontainers would retry a
// registry that is not there for several seconds before auto could fall back.
func ensureImage(ctx context.Context, image string) error {
	cli, err := dockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	pull, err := cli.ImagePull(ctx, image, client.ImagePullOptions{})
	if err != nil {
		return err
	}
	defer pull.Close()
	return pull.Wait(ctx)
}

// reapOrphans removes containers that an earlier harness on this host started and could
// not remove because it was killed. Best effort: a failure here must not stop a run.
func reapOrphans(ctx context.Context) {
	cli, err := dockerClient(ctx)
	if err != nil {
		return
	}
	defer cli.Close()
	host, _ := os.Hostname()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{
		All: true, Filters: make(client.Filters).Add("label", labelOwner+"=true", labelHost+"="+host),
	})
	if err != nil {
		return
	}
	for _, c := range list.Items {
		if !ownerGone(c.Labels) {
			continue
		}
		cli.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}
	reapNetworks(ctx, cli, host)
}
