package designfile

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/lockimpl"
)

// locker is a lock design made of scripts. Acquire grants the lock when its reply is
// yes (see truthy); release reports the lock lost when its reply is no; renew, when
// there is one, runs every TTL/3 while the lease is held, and a no stops it; held, when
// there is one, runs right before the holder's write, and on a no the holder does not
// write (lockimpl.Teller).
type locker struct {
	name                          string
	c                             redis.UniversalClient
	acquire, release, renew, held *Script
}

// TryLock implements lockimpl.Locker.
func (l *locker) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	c := &call{lockKey: key, token: lockimpl.NewToken(), ttl: ttl}
	v, err := l.acquire.run(ctx, l.c, c)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", l.name, err)
	case !truthy(v):
		return nil, lockimpl.ErrNotAcquired
	}
	lease := &lease{l: l, c: c}
	if l.renew == nil {
		return lease, nil
	}
	return lockimpl.KeepAlive(lease, ttl, func(ctx context.Context) (bool, error) {
		v, err := l.renew.run(ctx, l.c, c)
		return truthy(v), err
	}), nil
}

// StillHeld implements lockimpl.Teller with the design's held script, where it has one.
func (s *lease) StillHeld(ctx context.Context) (bool, error) {
	if s.l.held == nil {
		return false, lockimpl.ErrCannotTell
	}
	v, err := s.l.held.run(ctx, s.l.c, s.c)
	if err != nil {
		return false, fmt.Errorf("%s: held: %w", s.l.name, err)
	}
	return truthy(v), nil
}

type lease struct {
	l *locker
	c *call
}

func (s *lease) Release(ctx context.Context) error {
	v, err := s.l.release.run(ctx, s.l.c, s.c)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", s.l.name, err)
	case !truthy(v):
		return lockimpl.ErrNotHeld
	}
	return nil
}
