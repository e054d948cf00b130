package deploy

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The parts of a compose file deploy/swarm uses, as docker stack deploy reads them; a
// field not here fails the strict decoding.
type composeFile struct {
	Version  string                    `json:"version"`
	Services map[string]composeService `json:"services"`
	Networks map[string]composeNetwork `json:"networks,omitempty"`
}

type composeService struct {
	Image       string            `json:"image"`
	Entrypoint  []string          `json:"entrypoint,omitempty"`
	Command     []string          `json:"command,omitempty"`
	User        string            `json:"user,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	Volumes     []composeVolume   `json:"volumes,omitempty"`
	Networks    []string          `json:"networks,omitempty"`
	Deploy      composeDeploy     `json:"deploy"`
}

type composeVolume struct {
	Type   string `json:"type"`
	Source string `json:"source"`
	Target string `json:"target"`
}

type composeDeploy struct {
	Mode          string `json:"mode,omitempty"`
	Replicas      *int   `json:"replicas,omitempty"`
	EndpointMode  string `json:"endpoint_mode,omitempty"`
	RestartPolicy *struct {
		Condition string `json:"condition"`
	} `json:"restart_policy,omitempty"`
}

type composeNetwork struct {
	External bool   `json:"external"`
	Name     string `json:"name"`
}

// readEnv reads an env file as docker and kustomize do: NAME=value lines, # comments.
func readEnv(t *testing.T, b []byte) map[string]string {
	t.Helper()
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("sale.env: %q is no NAME=value", line)
		}
		env[k] = v
	}
	return env
}

var variable = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*)(:-([^}]*))?\}`)

// interpolate substitutes ${NAME} and ${NAME:-default} as docker stack deploy does; a
// variable neither set nor defaulted is an error (docker would make it empty).
func interpolate(b []byte, env map[string]string) ([]byte, error) {
	var missing []string
	out := variable.ReplaceAllFunc(b, func(m []byte) []byte {
		g := variable.FindSubmatch(m)
		if v, ok := env[string(g[1])]; ok {
			return []byte(v)
		}
		if g[2] != nil {
			return g[3]
		}
		missing = append(missing, string(g[1]))
		return nil
	})
	if len(missing) > 0 {
		return nil, fmt.Errorf("unset: %v", missing)
	}
	return out, nil
}

// stackOf decodes a compose file of deploy/swarm strictly, with env for its variables.
func stackOf(t *testing.T, raw []byte, env map[string]string) composeFile {
	t.Helper()
	b, err := interpolate(raw, env)
	if err != nil {
		t.Fatal(err)
	}
	var f composeFile
	if err := yaml.UnmarshalStrict(b, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// swarmEnv is what scripts/bench-swarm.sh exports beside sale.env.
func swarmEnv(sale map[string]string) map[string]string {
	env := map[string]string{"STOCKBENCH_RESULTS": "/srv/results", "STOCKBENCH_NETWORK": "stockbench-net"}
	for k, v := range sale {
		env[k] = v
	}
	return env
}

// swarmSale is what the swarm stack and its merge make of one sale: the stack's services
// and the merge's, decoded with sale's settings.
type swarmSale struct {
	redis, shard, merge composeService
	networks            map[string]composeNetwork
}

func buildSwarm(t *testing.T, read func(string) ([]byte, error), sale map[string]string) swarmSale {
	t.Helper()
	stack, err := read("swarm/stack.yml")
	if err != nil {
		t.Fatal(err)
	}
	merge, err := read("swarm/merge.yml")
	if err != nil {
		t.Fatal(err)
	}
	s, m := stackOf(t, stack, swarmEnv(sale)), stackOf(t, merge, swarmEnv(sale))
	for name, f := range map[string]composeFile{"stack.yml": s, "merge.yml": m} {
		if f.Version != "3.9" {
			t.Errorf("%s: version %q; replicated jobs need compose file format 3.9", name, f.Version)
		}
	}
	return swarmSale{redis: s.Services["redis"], shard: s.Services["shard"], merge: m.Services["merge"], networks: s.Networks}
}

// TestSwarmStackDecodesStrictly decodes the swarm stack and its merge with sale.env's
// settings and checks that they make one sharded run, as the Kubernetes manifests do:
// a job of STOCKBENCH_SHARDS tasks, all at once, told the count, the run's name and their
// slot, on a Redis reached by name (no virtual IP), writing where the merge job reads
// that run.
func TestSwarmStackDecodesStrictly(t *testing.T) {
	b, err := os.ReadFile("sale/sale.env")
	if err != nil {
		t.Fatal(err)
	}
	sale := readEnv(t, b)
	s := buildSwarm(t, os.ReadFile, sale)

	d := s.shard.Deploy
	n, _ := strconv.Atoi(sale["STOCKBENCH_SHARDS"])
	if d.Mode != "replicated-job" || d.Replicas == nil || *d.Replicas != n || n < 2 {
		t.Fatalf("shard: want a replicated job of STOCKBENCH_SHARDS (%s) tasks, got mode %q replicas %v", sale["STOCKBENCH_SHARDS"], d.Mode, d.Replicas)
	}
	env := s.shard.Environment
	for k, want := range map[string]string{
		"STOCKBENCH_SHARDS": sale["STOCKBENCH_SHARDS"], "STOCKBENCH_RUN_ID": sale["STOCKBENCH_RUN_ID"],
		"STOCKBENCH_SHARD_SLOT": "{{.Task.Slot}}", "STOCKBENCH_REDIS_URL": "redis://redis:6379",
	} {
		if env[k] != want {
			t.Errorf("shard: %s=%q, want %q", k, env[k], want)
		}
	}
	if c := s.shard.Command; len(c) < 3 || c[0] != "run" || c[1] != "--lock" || slices.Contains(c, "--shard") {
		t.Errorf("shard: want run --lock NAME (by default) with the shard from the environment, got %v", c)
	}
	queue := swarmEnv(sale)
	queue["STOCKBENCH_KIND"], queue["STOCKBENCH_DESIGN"] = "--queue", "stream"
	if c := buildSwarm(t, os.ReadFile, queue).shard.Command; c[1] != "--queue" || c[2] != "stream" {
		t.Errorf("shard: STOCKBENCH_KIND and STOCKBENCH_DESIGN make it a queue sale's: got %v", c)
	}
	if s.redis.Deploy.EndpointMode != "dnsrr" {
		t.Errorf("redis: endpoint_mode %q; a virtual IP needs the kernel's IPVS, which this machine kind lacks: want dnsrr", s.redis.Deploy.EndpointMode)
	}
	if m := s.merge.Command; len(m) < 2 || m[0] != "merge" || m[1] != "/results/"+sale["STOCKBENCH_RUN_ID"] {
		t.Errorf("merge: want merge /results/%s (the shards' run directory), got %v", sale["STOCKBENCH_RUN_ID"], m)
	}
	for name, svc := range map[string]composeService{"shard": s.shard, "merge": s.merge} {
		if len(svc.Volumes) != 1 || svc.Volumes[0] != (composeVolume{Type: "bind", Source: "/srv/results", Target: "/results"}) {
			t.Errorf("%s: want STOCKBENCH_RESULTS bound at /results, got %+v", name, svc.Volumes)
		}
		if svc.Image != s.shard.Image {
			t.Errorf("%s: image %s, the shards' is %s", name, svc.Image, s.shard.Image)
		}
	}
	if net := s.networks["sale"]; !net.External || net.Name != "stockbench-net" || !slices.Equal(s.shard.Networks, []string{"sale"}) || !slices.Equal(s.redis.Networks, []string{"sale"}) {
		t.Errorf("the shards and Redis on the script's network STOCKBENCH_NETWORK: %+v, %v, %v", s.networks, s.shard.Networks, s.redis.Networks)
	}
}

// TestComposeDecodingRefusesUnknownFields shows the check has teeth: a misspelt field and
// an unset variable fail.
func TestComposeDecodingRefusesUnknownFields(t *testing.T) {
	var f composeFile
	if err := yaml.UnmarshalStrict([]byte("version: \"3.9\"\nservices:\n  shard:\n    image: x\n    deploy: {mode: replicated-job, replica: 4}\n"), &f); err == nil {
		t.Error("a misspelt field decoded")
	}
	if _, err := interpolate([]byte("replicas: ${NOT_SET}"), nil); err == nil {
		t.Error("an unset variable was taken as empty")
	}
}
