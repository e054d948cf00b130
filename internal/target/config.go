package target

import (
	"fmt"
	"slices"
)

// Modes a user can ask for; "" means auto.
var Modes = []string{"auto", "container", "process", "external"}

// Config chooses a provider the way the command line does.
type Config struct {
	// Mode is one of Modes. Default: "auto", or "external" when URL is set.
	Mode string
	// URL is the external server's URL.
	URL string
	// Cluster selects the Redis Cluster client for an external URL.
	Cluster bool
	// Image is the container image. Default: DefaultImage.
	Image string
	// Binary is the redis-server for the process provider. Default: from PATH.
	Binary string
}

// Provider returns the provider c describes, or an error a user can act on.
func (c Config) Provider() (Provider, error) {
	mode := c.Mode
	if mode == "" || (mode == "auto" && c.URL != "") {
		mode = "auto"
		if c.URL != "" {
			mode = "external"
		}
	}
	if !slices.Contains(Modes, mode) {
		return nil, fmt.Errorf("unknown redis mode %q (known: auto, container, process, external)", c.Mode)
	}
	if c.URL != "" && mode != "external" {
		return nil, fmt.Errorf("--redis-url needs --redis external, not %q", mode)
	}
	switch mode {
	case "external":
		if c.URL == "" {
			return nil, fmt.Errorf("--redis external needs --redis-url")
		}
		return External{URL: c.URL, Cluster: c.Cluster}, nil
	case "container":
		return Container{Image: c.Image}, nil
	case "process":
		return Process{Binary: c.Binary}, nil
	}
	return Auto{Container{Image: c.Image}, Process{Binary: c.Binary}}, nil
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
