package salestest_test

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/scenarios"
	"github.com/stockbench/stockbench/scenarios/salestest"
)

// The token lock, as its author would claim it: safe but for a holder paused past the
// TTL, and for the lock server pausing under a holder (a server the kit starts).
func TestTokenLockKeepsItsClaims(t *testing.T) {
	token, err := lockimpl.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	// Patient buyers: raced, in containers, beside another package's sales, the
	// preset's gave up on 7 units of 30 behind a dead holder's lease (UNSOLD, so STUCK).
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	sale.Retry.Timeout = 2 * time.Minute
	salestest.Lock(t, salestest.LockDesign{
		Impl: token, Sale: sale,
		Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold, faults.RedisPause: oracle.ClassOversold},
		Faults: []faults.Kind{faults.ClientPause, faults.CrashHolder, faults.RedisPause},
	})
}

// The token lock as a scheduler's lock, in a scheduled drop: a scheduler paused past the
// TTL fires its wave after another has (OVERSOLD); one that dies holding it delays the
// wave by a TTL, no more.
func TestTokenAsSchedulerLock(t *testing.T) {
	token, err := lockimpl.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	drop, err := scenarios.Lookup("drop-sale")
	if err != nil {
		t.Fatal(err)
	}
	salestest.Lock(t, salestest.LockDesign{
		Impl: token, Sale: drop,
		Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold},
		Faults: []faults.Kind{faults.ClientPause, faults.CrashHolder},
	})
}

// A queue that hands a dead worker's task on, with a fulfil that applies each order
// once: safe under a worker's crash.
func TestStreamQueueKeepsItsClaims(t *testing.T) {
	stream, err := queueimpl.Lookup("stream")
	if err != nil {
		t.Fatal(err)
	}
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	sale.Fulfil = scenarios.Idempotent
	salestest.Queue(t, salestest.QueueDesign{Impl: stream, Sale: sale, Faults: []faults.Kind{faults.WorkerCrashLate}})
}

// On your own Redis the kit touches only its sales' keys, flushes nothing, and skips the
// faults that need servers of their own, saying why.
func TestOnYourOwnRedis(t *testing.T) {
	own := redistest.Start(t)
	c := own.Client(1)
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "yours", "untouched", 0).Err(); err != nil {
		t.Fatal(err)
	}
	token, err := lockimpl.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("kit", func(t *testing.T) {
		salestest.Lock(t, salestest.LockDesign{
			Impl:   token,
			Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold},
			Faults: []faults.Kind{faults.ClientPause, faults.RedisPause},
			Redis:  salestest.UseRedis(t, "redis://"+own.Addr()),
		})
	})
	if v, _ := c.Get(ctx, "yours").Result(); v != "untouched" {
		t.Errorf("the user's key: want untouched, got %q", v)
	}
	if keys, _ := c.Keys(ctx, "*").Result(); len(keys) != 1 {
		t.Errorf("want only the user's key left, got %v", keys)
	}
}

// A design file and a process adapter run in the kit as in the command: the token lock
// written as scripts keeps the claims of the Go one; the Python adapter's redis-py lock
// is safe with no fault and when its holder dies.
func TestDesignsFromFilesAndAdapters(t *testing.T) {
	scripts := salestest.LockFile(t, "../../examples/locks/token-scripts.json")
	salestest.Lock(t, salestest.LockDesign{
		Impl:   scripts,
		Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold},
		Faults: []faults.Kind{faults.ClientPause, faults.CrashHolder},
	})
	if _, err := exec.LookPath("/usr/bin/python3"); err != nil || exec.Command("/usr/bin/python3", "-c", "import redis").Run() != nil {
		if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
			t.Fatalf("Debian's Python with redis-py is missing")
		}
		t.Skip("Debian's Python with redis-py is missing; scripts/ensure-adapters.sh installs it")
	}
	py := salestest.LockExec(t, "redis-py=/usr/bin/python3 ../../adapters/python/redis_py_lock.py", 4)
	salestest.Lock(t, salestest.LockDesign{Impl: py, Faults: []faults.Kind{faults.CrashHolder}})
}
