package scenarios

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
)

// forgetful is the token lock with a release that says it let go and did not.
type forgetful struct{ c redis.Cmdable }

func (f forgetful) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	ok, err := f.c.SetNX(ctx, key, lockimpl.NewToken(), ttl).Result()
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, lockimpl.ErrNotAcquired
	}
	return forgotten{}, nil
}

type forgotten struct{}

func (forgotten) Release(context.Context) error { return nil }

// TestZombieLock: a lock its last holder released cleanly, still alive at the end, is a
// zombie (STUCK), down to one buyer and one unit; the token lock's is gone.
func TestZombieLock(t *testing.T) {
	zombie := lockimpl.Impl{Name: "forgetful", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return forgetful{e.Locks[0]} }}
	token, err := lockimpl.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		impl lockimpl.Impl
		want oracle.Class
	}{{zombie, oracle.ClassStuck}, {token, oracle.ClassSafe}} {
		t.Run(tt.impl.Name, func(t *testing.T) {
			s := FlashSale{Sale: Sale{Name: t.Name(), Buyers: 1, Stock: 1, Conns: 1, Prefix: "{test:" + t.Name() + "}"},
				Critical: ReadThinkWrite, TTL: 5 * time.Second}
			s = s.WithDefaults()
			c := redistest.Shared(t).Client(s.Conns)
			defer c.Close()
			r, err := s.Run(context.Background(), Single(c), tt.impl)
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict.Class != tt.want || (tt.want == oracle.ClassStuck) != strings.Contains(r.Verdict.String(), "ZOMBIE-LOCK") {
				t.Errorf("want %s, got %s (%s)", tt.want, r.Verdict.Cell(), r.Verdict)
			}
			if h := r.Oracle; h.Bought != 1 {
				t.Errorf("want the one unit sold, got %+v", h)
			}
		})
	}
}
