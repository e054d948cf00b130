package lockimpl

import (
	"context"
	"time"
)

// None grants every TryLock at once and releases nothing: the negative control. A check
// that does not find its oversell is broken.
type None struct{}

var _ Locker = None{}

// TryLock implements [Locker].
func (None) TryLock(context.Context, string, time.Duration) (Lease, error) { return noLease{}, nil }

type noLease struct{}

func (noLease) Release(context.Context) error { return nil }
