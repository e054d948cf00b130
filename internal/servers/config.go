package servers

import (
	"cmp"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

// The environment that says where Redis comes from, read once here for the command, the
// test kit and the project's tests alike.
const (
	EnvMode   = "STOCKBENCH_REDIS"        // auto, container, process or external
	EnvURL    = "STOCKBENCH_REDIS_URL"    // the user's own server
	EnvImage  = "STOCKBENCH_REDIS_IMAGE"  // the container target's image
	EnvBinary = "STOCKBENCH_REDIS_SERVER" // the process target's redis-server
)

// FromEnv is the Config the environment describes, each setting it leaves unset at its
// default: ModeAuto, no URL, DefaultImage, redis-server from PATH.
func FromEnv() Config {
	return Config{
		Mode:   Kind(cmp.Or(os.Getenv(EnvMode), string(ModeAuto))),
		URL:    os.Getenv(EnvURL),
		Image:  cmp.Or(os.Getenv(EnvImage), DefaultImage),
		Binary: cmp.Or(os.Getenv(EnvBinary), "redis-server"),
	}
}

// ModeAuto asks for a container when a Docker engine answers, and a process otherwise.
const ModeAuto Kind = "auto"

// Modes are what a Config may ask for: ModeAuto or a kind of target.
var Modes = []Kind{ModeAuto, KindContainer, KindProcess, KindExternal}

// Config chooses a provider the way the command line does.
type Config struct {
	// Mode is one of Modes. Default: ModeAuto, or KindExternal when URL is set.
	Mode Kind
	// URL is the external server's URL.
	URL string
	// Cluster selects the Redis Cluster client for an external URL.
	Cluster bool
	// Patience is how long an external server may take to answer at the start. Default:
	// DefaultPatience.
	Patience time.Duration
	// Image is the container image. Default: DefaultImage.
	Image string
	// Binary is the redis-server for the process provider. Default: from PATH.
	Binary string
}

// Bind registers the flags that choose the servers on fs (--redis, --redis-url,
// --redis-cluster, --redis-image, --redis-server), each defaulting to its setting from the
// environment (FromEnv). A URL on the command line outranks a mode from the environment.
func (c *Config) Bind(fs *flag.FlagSet) {
	env := FromEnv()
	c.Mode, c.URL = env.Mode, env.URL
	modeGiven := false
	fs.Func("redis", "where Redis comes from, its `mode`: auto, container, process or external (default auto; env "+EnvMode+")",
		func(s string) error { c.Mode, modeGiven = Kind(s), true; return nil })
	fs.Func("redis-url", "your own Redis, as redis://[user:pass@]host:port[/db]; only keys under the run's prefix are touched (env "+EnvURL+")",
		func(s string) error {
			c.URL = s
			if !modeGiven {
				c.Mode = ModeAuto
			}
			return nil
		})
	fs.BoolVar(&c.Cluster, "redis-cluster", false, "--redis-url is a Redis Cluster (more seeds as ?addr=host:port)")
	fs.StringVar(&c.Image, "redis-image", env.Image, "image for the container target (env "+EnvImage+")")
	fs.StringVar(&c.Binary, "redis-server", env.Binary, "redis-server binary for the process target (env "+EnvBinary+")")
}

// Env is c as the environment another stockbench process reads it from (FromEnv), for a
// command that runs others: a URL's password goes in no command line. A cluster has no
// variable of its own: Args carries it.
func (c Config) Env() []string {
	return []string{EnvMode + "=" + string(cmp.Or(c.Mode, ModeAuto)), EnvURL + "=" + c.URL, EnvImage + "=" + c.Image, EnvBinary + "=" + c.Binary}
}

// Args are the flags Env cannot carry: --redis-cluster.
func (c Config) Args() []string {
	if c.Cluster {
		return []string{"--redis-cluster"}
	}
	return nil
}

// Provider returns the provider c describes, or an error a user can act on.
func (c Config) Provider() (Provider, error) {
	mode := c.Mode
	if mode == "" || (mode == ModeAuto && c.URL != "") {
		mode = ModeAuto
		if c.URL != "" {
			mode = KindExternal
		}
	}
	if !slices.Contains(Modes, mode) {
		return nil, fmt.Errorf("unknown redis mode %q (known: %s)", c.Mode, modeList())
	}
	if c.URL != "" && mode != KindExternal {
		return nil, fmt.Errorf("a Redis URL needs mode %s, not %q", KindExternal, mode)
	}
	switch mode {
	case KindExternal:
		if c.URL == "" {
			return nil, fmt.Errorf("mode %s needs a Redis URL", KindExternal)
		}
		return External{URL: c.URL, Cluster: c.Cluster, Patience: c.Patience}, nil
	case KindContainer:
		return Container{Image: c.Image}, nil
	case KindProcess:
		return Process{Binary: c.Binary}, nil
	}
	return Auto{Container{Image: c.Image}, Process{Binary: c.Binary}}, nil
}

func modeList() string {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}

// More returns a provider that starts more servers of the same kind as one that started
// as kind, for sales that need several, containers on network; nil for an external
// server, of which there is only the one the user named.
func (c Config) More(kind Kind, network string) Provider {
	switch kind {
	case KindContainer:
		return Container{Image: c.Image, Network: network}
	case KindProcess:
		return Process{Binary: c.Binary}
	}
	return nil
}

// WithArgs returns a provider that starts servers as p does, with args after p's own;
// nil for one that starts none (an external server).
func WithArgs(p Provider, args ...string) Provider {
	switch p := p.(type) {
	case Container:
		p.Args = append(slices.Clone(p.Args), args...)
		return p
	case Process:
		p.Args = append(slices.Clone(p.Args), args...)
		return p
	}
	return nil
}
