package servers

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/redact"
)

// External connects to a server the user runs. The harness never stops it and never
// flushes it: scenarios touch only keys under their own prefix.
type External struct {
	// URL is a redis:// or rediss:// URL, as go-redis's ParseURL reads it; for a cluster,
	// as ParseClusterURL reads it (more seeds as addr= parameters).
	URL string
	// Cluster selects the Redis Cluster client.
	Cluster bool
	// Patience is how long the server may take to answer at the start: a server that
	// does not is refused then. Default: DefaultPatience. A shard waits longer, as long as
	// for the other shards: an orchestrator starts it beside its Redis.
	Patience time.Duration
}

// DefaultPatience is how long an external server may take to answer at the start.
const DefaultPatience = 3 * time.Second

var _ Provider = External{}

// Start implements [Provider].
func (e External) Start(ctx context.Context) (*Target, error) {
	detail := RedactURL(e.URL) // first: the errors below may quote the URL
	opts, err := e.options()
	if err != nil {
		return nil, fmt.Errorf("redis URL: %s", redactErr(err))
	}
	t := newTarget(Info{Kind: KindExternal, Addr: opts.Addrs[0], Detail: detail, Cluster: e.Cluster}, opts, nil, nil)
	if err := t.ready(ctx, cmp.Or(e.Patience, DefaultPatience)); err != nil {
		return nil, fmt.Errorf("%s", redactErr(err))
	}
	return t, nil
}

// redactErr is err's text with the passwords seen so far masked. The error's chain is
// dropped with them: nothing above needs more than its text.
func redactErr(err error) string { return redact.String(err.Error()) }

func (e External) options() (redis.UniversalOptions, error) {
	if e.Cluster {
		o, err := redis.ParseClusterURL(e.URL)
		if err != nil {
			return redis.UniversalOptions{}, err
		}
		return redis.UniversalOptions{
			Addrs: o.Addrs, Username: o.Username, Password: o.Password, TLSConfig: o.TLSConfig,
			IsClusterMode: true,
		}, nil
	}
	o, err := redis.ParseURL(e.URL)
	if err != nil {
		return redis.UniversalOptions{}, err
	}
	return redis.UniversalOptions{
		Addrs: []string{o.Addr}, Username: o.Username, Password: o.Password, DB: o.DB, TLSConfig: o.TLSConfig,
	}, nil
}
