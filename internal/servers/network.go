package servers

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
)

// Network is a private Docker network for the servers one run starts beside its shared
// one: a primary and its replica reach each other on it.
type Network struct {
	n *testcontainers.DockerNetwork
}

// NewNetwork creates a network labelled as the harness's, so that a later run removes it
// if this one is killed before it can.
func NewNetwork(ctx context.Context) (*Network, error) {
	quiet()
	// As with a container, not cut off halfway: removed instead if ctx has ended.
	n, err := network.New(context.WithoutCancel(ctx), network.WithLabels(ownLabels()))
	if err != nil {
		return nil, fmt.Errorf("docker network: %w", err)
	}
	if err := ctx.Err(); err != nil {
		n.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("docker network: %w", err)
	}
	return &Network{n}, nil
}

// Name is the network's name, for Container.Network.
func (n *Network) Name() string { return n.n.Name }

// Remove removes the network. A container still on it is the run's own (one whose stop
// failed or had not finished): it is removed first, and named in the error, so that
// nothing of the run is left behind.
func (n *Network) Remove(ctx context.Context) error {
	err := n.n.Remove(ctx)
	if err == nil {
		return nil
	}
	left := n.removeContainers(ctx)
	if err = n.n.Remove(ctx); err != nil {
		return fmt.Errorf("docker network %s: %w", n.n.Name, err)
	}
	if len(left) > 0 {
		return fmt.Errorf("docker network %s: containers %s were still on it; removed", n.n.Name, strings.Join(left, ", "))
	}
	return nil
}

// removeContainers force-removes the containers on the network, and names them.
func (n *Network) removeContainers(ctx context.Context) []string {
	cli, err := dockerClient(ctx)
	if err != nil {
		return nil
	}
	defer cli.Close()
	info, err := cli.NetworkInspect(ctx, n.n.ID, client.NetworkInspectOptions{})
	if err != nil {
		return nil
	}
	var names []string
	for id, ep := range info.Network.Containers {
		if _, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err == nil {
			names = append(names, ep.Name)
		}
	}
	return names
}

// ownLabels mark what this harness process creates in Docker.
func ownLabels() map[string]string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return map[string]string{labelOwner: "true", labelPID: strconv.Itoa(pid), labelHost: host, labelStart: processStart(pid)}
}

// ownerGone reports whether the harness process named by these labels has exited.
// Labels it cannot read keep the object: removing a live run's Redis is worse than a leak.
func ownerGone(labels map[string]string) bool {
	pid, err := strconv.Atoi(labels[labelPID])
	if err != nil {
		return false
	}
	if !processAlive(pid) {
		return true
	}
	want, now := labels[labelStart], processStart(pid)
	if now == "" && !processAlive(pid) {
		return true // it exited between the two looks
	}
	return want != "" && now != "" && want != now
}

// reapNetworks removes networks whose harness is gone, once their containers are.
func reapNetworks(ctx context.Context, cli *testcontainers.DockerClient, host string) {
	list, err := cli.NetworkList(ctx, client.NetworkListOptions{
		Filters: make(client.Filters).Add("label", labelOwner+"=true", labelHost+"="+host),
	})
	if err != nil {
		return
	}
	for _, n := range list.Items {
		if ownerGone(n.Labels) {
			cli.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		}
	}
}
