package scenarios_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/scenarios"
)

// ownerLock is a lock of your own, registered nowhere: SET NX PX with a value of its
// own, and a release that deletes the key only while it still holds that value.
type ownerLock struct{ c redis.UniversalClient }

var unlock = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

func (l ownerLock) TryLock(ctx context.Context, key string, ttl time.Duration) (lockimpl.Lease, error) {
	value := fmt.Sprint(time.Now().UnixNano())
	ok, err := l.c.SetNX(ctx, key, value, ttl).Result()
	switch {
	case err != nil:
		return nil, fmt.Errorf("ownerlock: %w", err)
	case !ok:
		return nil, lockimpl.ErrNotAcquired
	}
	return ownerLease{l.c, key, value}, nil
}

type ownerLease struct {
	c          redis.UniversalClient
	key, value string
}

func (l ownerLease) Release(ctx context.Context) error {
	n, err := unlock.Run(ctx, l.c, []string{l.key}, l.value).Int()
	if err == nil && n == 0 {
		return lockimpl.ErrNotHeld
	}
	return err
}

// A design of your own runs in a sale as the built-in ones do: wrap it in an Impl (no
// registry needed) and run the sale on your Redis. Only keys under the sale's prefix are
// touched, and they are deleted at the end.
func ExampleFlashSale_Run() {
	client := redis.NewClient(&redis.Options{Addr: redistest.SharedAddr()}) // your Redis
	defer client.Close()

	mine := lockimpl.Impl{Name: "ownerlock", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return ownerLock{e.Locks[0]} }}
	sale := scenarios.FlashSale{
		Sale: scenarios.Sale{Name: "example", Buyers: 50, Stock: 10, Prefix: "{example:clean}"},
		TTL:  time.Second,
	}
	run, err := sale.Run(context.Background(), scenarios.Single(client), mine)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: sold %d of %d\n", run.Verdict.Cell(), run.Oracle.Bought, run.Oracle.InitialStock)
	// Output: SAFE: sold 10 of 10
}

// The same lock under a fault: the 5th holder's process stops for 1.5 TTLs after reading
// the stock. Its lock expires meanwhile, the next buyer reads the same stock, and the
// late holder's write puts back a unit already sold. An owner check on release protects
// the next holder's lock, not the stock.
func ExampleFlashSale_Run_fault() {
	client := redis.NewClient(&redis.Options{Addr: redistest.SharedAddr()})
	defer client.Close()

	pause, err := faults.Parse("client-pause")
	if err != nil {
		fmt.Println(err)
		return
	}
	mine := lockimpl.Impl{Name: "ownerlock", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return ownerLock{e.Locks[0]} }}
	sale := scenarios.FlashSale{
		Sale:  scenarios.Sale{Name: "example", Buyers: 50, Stock: 10, Prefix: "{example:paused}", Faults: pause},
		TTL:   500 * time.Millisecond,
		Think: scenarios.Fixed(time.Millisecond),
	}
	run, err := sale.Run(context.Background(), scenarios.Single(client), mine)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(run.Verdict.Class)
	// Output: OVERSOLD
}
