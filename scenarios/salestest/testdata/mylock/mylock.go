// Package mylock is a lock library's own repository, as the kit's test writes it: two
// locks, one that keeps holders apart while they live, and one that mixes up its units.
package mylock

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

var ErrTaken = errors.New("mylock: taken")

// Lock takes key with SET NX PX and a random value, and releases it only while it still
// holds that value.
type Lock struct {
	C redis.UniversalClient
	// Seconds is the bug: the TTL goes to PX as whole seconds, so a 1s lock lives 1ms.
	Seconds bool
}

var unlock = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

func (l Lock) Acquire(ctx context.Context, key string, ttl time.Duration) (release func(context.Context) error, err error) {
	value := rand.Text()
	px := ttl.Milliseconds()
	if l.Seconds {
		px = int64(ttl / time.Second)
	}
	ok, err := l.C.SetArgs(ctx, key, value, redis.SetArgs{Mode: "NX", TTL: time.Duration(px) * time.Millisecond}).Result()
	if err == redis.Nil || (err == nil && ok != "OK") {
		return nil, ErrTaken
	}
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return unlock.Run(ctx, l.C, []string{key}, value).Err() }, nil
}
