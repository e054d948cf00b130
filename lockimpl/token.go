package lockimpl

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Token takes the lock with SET key token NX PX ttl, a token unique to the grant, and
// releases it with a Lua compare-and-delete, so that a holder whose lock expired cannot
// delete the next holder's.
type Token struct {
	Client redis.Cmdable
}

var _ Locker = Token{}

var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`)

// TryLock implements [Locker].
func (t Token) TryLock(ctx context.Context, key string, ttl time.Duration) (Lease, error) {
	lease, err := takeToken(ctx, t.Client, key, ttl)
	if err != nil {
		return nil, fmt.Errorf("token: %w", err)
	}
	if lease == nil {
		return nil, ErrNotAcquired
	}
	return lease, nil
}

// tokenLease is a lock held under a unique token.
type tokenLease struct {
	client redis.Cmdable
	key    string
	token  string
}

// takeToken makes one SET NX PX attempt; a nil lease means the lock is taken.
func takeToken(ctx context.Context, c redis.Cmdable, key string, ttl time.Duration) (*tokenLease, error) {
	token := NewToken()
	ok, err := c.SetNX(ctx, key, token, ttl).Result()
	if err != nil {
		return nil, fmt.Errorf("set nx: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &tokenLease{client: c, key: key, token: token}, nil
}

func (l *tokenLease) Release(ctx context.Context) error {
	n, err := releaseScript.Run(ctx, l.client, []string{l.key}, l.token).Int64()
	if err != nil {
		return fmt.Errorf("lockimpl: release %s: %w", l.key, err)
	}
	if n == 0 {
		return ErrNotHeld
	}
	return nil
}

// Tokens are a random per-process prefix and a counter: unique without a syscall per grant.
var (
	tokenPrefix = func() string {
		b := make([]byte, 8)
		rand.Read(b)
		return hex.EncodeToString(b) + "-"
	}()
	tokenSeq atomic.Uint64
)

// NewToken returns a value unique to one grant, across grants and processes: a random
// per-process prefix and a counter, for designs that mark the lock with its holder.
func NewToken() string { return tokenPrefix + strconv.FormatUint(tokenSeq.Add(1), 10) }
