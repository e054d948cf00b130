package rig

import (
	"context"
	"errors"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers"
	"github.com/stockbench/stockbench/scenarios"
)

// Harness is the Redis a run uses, started once for a whole list of sales: the shared
// server and a pool of the servers some sales need beside it. The stockbench command,
// the test kit and the project's tests all start theirs with StartHarness and run every
// sale on it with On.
type Harness struct {
	Shared *servers.Target
	Pool   *Pool
}

// NoServerError is StartHarness failing to have the shared server at all: none could be
// started, or the user's own does not answer. Anything else went wrong beside it.
type NoServerError struct{ Err error }

func (e *NoServerError) Error() string { return e.Err.Error() }
func (e *NoServerError) Unwrap() error { return e.Err }

// StartHarness starts the shared server p provides and the pool beside it, whose servers
// are started as cfg describes.
func StartHarness(ctx context.Context, p servers.Provider, cfg servers.Config) (*Harness, error) {
	shared, err := p.Start(ctx)
	if err != nil {
		return nil, &NoServerError{err}
	}
	pool, err := NewPool(ctx, shared, cfg)
	if err != nil {
		return nil, errors.Join(err, shared.Close(context.WithoutCancel(ctx)))
	}
	return &Harness{Shared: shared, Pool: pool}, nil
}

// Close stops the pool's servers, then the shared one.
func (h *Harness) Close(ctx context.Context) error {
	return errors.Join(h.Pool.Close(ctx), h.Shared.Close(ctx))
}

// Need is what one sale needs of the harness: the facts of its design and plan that
// decide its servers, said once by whoever runs the sale (the command's job, the kit's
// subject, a test).
type Need struct {
	// Nodes is how many independent lock servers the design uses. Default: 1.
	Nodes int
	// Replicated: the design waits for a replica of its lock server (Replicated).
	Replicated bool
	// Faults is the sale's fault plan, whose faults may need servers of their own.
	Faults faults.Plan
	// Conns is the size of each buyer client's connection pool.
	Conns int
	// Apart: the sale runs on servers of its own only, not the shared one (Apart).
	Apart bool
}

// On starts the servers need asks for beside h's shared one, runs sale on their clients
// and stops them again, whatever sale returns.
func On[T any](ctx context.Context, h *Harness, need Need, sale func(context.Context, scenarios.Redis) (T, error)) (T, error) {
	var opts []Option
	if need.Apart {
		opts = append(opts, Apart())
	}
	if need.Replicated {
		opts = append(opts, Replicated())
	}
	r, err := Start(ctx, h.Shared, h.Pool, max(1, need.Nodes), need.Faults, opts...)
	if err != nil {
		var zero T
		return zero, err
	}
	defer r.Close(context.WithoutCancel(ctx))
	return sale(ctx, r.Clients(need.Conns))
}

// LockDesign is what of a lock design decides its servers (lockimpl.Impl is one).
type LockDesign interface {
	LockNodes() int
	Replicated() bool
}

// ForLock is what a sale through the lock design d under plan needs, its buyers' clients
// of conns connections: the design's lock servers, replicated when it waits for a
// replica.
func ForLock(d LockDesign, plan faults.Plan, conns int) Need {
	return Need{Nodes: d.LockNodes(), Replicated: d.Replicated(), Faults: plan, Conns: conns}
}

// ForQueue is what a queue sale under plan needs: one server, its buyers' clients of
// conns connections.
func ForQueue(plan faults.Plan, conns int) Need { return Need{Nodes: 1, Faults: plan, Conns: conns} }
