//go:build long

package scenarios_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// TestEveryDocumentedVerdict asserts every design's documented verdicts that
// TestDocumentedVerdicts leaves out: the rest of those under the faults on its clients,
// and every one under the faults on its servers and the network.
func TestEveryDocumentedVerdict(t *testing.T) { documentedVerdicts(t, rest) }

// TestEveryDocumentedQueueVerdict asserts every queue design's documented verdicts that
// TestDocumentedQueueVerdicts leaves out.
func TestEveryDocumentedQueueVerdict(t *testing.T) { documentedQueueVerdicts(t, rest) }

// TestEveryDocumentedDropVerdict asserts every lock's documented drop verdicts that
// TestDocumentedDropVerdicts leaves out.
func TestEveryDocumentedDropVerdict(t *testing.T) { documentedDropVerdicts(t, rest) }

// TestServerErrorModes: a lock server answering OOM still takes the watchdog's PEXPIRE,
// which takes no memory, and the lease lives; one answering READONLY, as a demoted
// master, refuses it, and the lease is outlived; one LOADING refuses everything and
// comes back without the lock that expired while it loaded: the mode decides the
// verdict.
func TestServerErrorModes(t *testing.T) {
	h := rigtest.Harness(t)
	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		design, plan string
		want         []oracle.Class
	}{
		{"token-watchdog", "server-errors", []oracle.Class{oracle.ClassSafe}},
		{"token-watchdog", "server-errors:mode=readonly", []oracle.Class{oracle.ClassOversold, oracle.ClassLost}},
		// Its renewals meet LOADING, and the reload drops the lock that expired meanwhile.
		{"token-watchdog", "server-errors:mode=loading", []oracle.Class{oracle.ClassOversold, oracle.ClassLost}},
	} {
		impl, err := lockimpl.Lookup(tc.design)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(tc.design+"/"+tc.plan, func(t *testing.T) {
			t.Parallel()
			plan, err := faults.Parse(tc.plan)
			if err != nil {
				t.Fatal(err)
			}
			s := sale
			s.Faults, s.Prefix = plan, fmt.Sprintf("{test:modes:%s:%s}", tc.design, plan)
			run := rigtest.On(t, h, rig.ForLock(impl, plan, s.WithDefaults().Conns),
				func(ctx context.Context, r scenarios.Redis) (results.Run, error) { return s.Run(ctx, r, impl) })
			if !slices.Contains(tc.want, run.Verdict.Class) || len(run.Events) == 0 || run.Events[0].Err != "" {
				t.Errorf("want %v, got %s (%s); events %+v", tc.want, run.Verdict.Cell(), run.Verdict, run.Events)
			}
		})
	}
}

// A restart gives back what the server's persistence mode kept. A queue that keeps its
// tasks until they are acked (stream) loses the accepted orders a restart wipes when
// nothing is kept or the last snapshot predates them, and none when every write reaches
// the AOF before its reply. everysec may lose some or none: a kill -9 loses no write that
// reached the kernel, but while its background fsync is still running (a slow disk, a
// loaded machine) Redis holds the AOF buffer back for up to 2 s and replies all the same
// (flushAppendOnlyFile's postponed flush), so acknowledged orders can die with the
// process (LOST 60 on a loaded CI machine). A lock written to an AOF survives the
// restart: the token lock, which
// oversells when the restart comes back empty (its lock broken under a holder inside its
// lease), does not when it comes back from the AOF
// (a process restarts well inside the lock's TTL). Buyers wait out that TTL: a holder
// whose commands failed through a slow restart leaves its lock to expire, and buyers who
// gave up before it did would read as STUCK, which is the restart's time, not the AOF.
func TestRestartKeepsWhatItsModeKept(t *testing.T) {
	h := rigtest.Harness(t)
	queue, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	stream, err := queueimpl.Lookup("stream")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode faults.Persistence
		lost *bool // nil: either, as the disk's speed decides
	}{
		{faults.PersistNone, &yes},
		{faults.PersistRDB, &yes},
		{faults.PersistAOFEverysec, nil},
		{faults.PersistAOFAlways, &no},
	} {
		t.Run(fmt.Sprintf("stream/%s", tt.mode), func(t *testing.T) {
			t.Parallel() // a server of its own, restarted; the sale mostly waits on it
			plan := faults.Plan{{Kind: faults.RedisRestart, Persist: tt.mode}}
			s := queue
			s.Faults, s.Fulfil, s.Prefix = plan, scenarios.Idempotent, fmt.Sprintf("{persist:stream:%s}", tt.mode)
			r := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, stream)
			})
			restarted(t, r)
			q := r.Queue
			if tt.lost != nil && (q.Lost > 0) != *tt.lost || q.Oversold > 0 || q.DuplicatedEffects > 0 {
				t.Errorf("want accepted orders lost: %v, nothing oversold or applied twice; got %s: %+v", lostWant(tt.lost), r.Verdict, q)
			}
		})
	}

	sale, err := scenarios.Lookup("fault-sale")
	if err != nil {
		t.Fatal(err)
	}
	token, err := lockimpl.Lookup("token")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		mode faults.Persistence
		want oracle.Class
	}{
		{faults.PersistNone, oracle.ClassOversold},
		{faults.PersistAOFAlways, oracle.ClassSafe},
	} {
		t.Run(fmt.Sprintf("token/%s", tt.mode), func(t *testing.T) {
			t.Parallel() // buyers wait out the victim's 10 s lease
			plan := faults.Plan{{Kind: faults.RedisRestart, Persist: tt.mode}}
			s := sale
			s.TTL = 10 * time.Second
			s.Retry.Timeout = 3 * s.TTL
			s.Faults, s.Prefix = plan, fmt.Sprintf("{persist:token:%s}", tt.mode)
			r := rigtest.On(t, h, rig.Need{Nodes: 1, Faults: plan, Conns: s.WithDefaults().Conns}, func(ctx context.Context, red scenarios.Redis) (results.Run, error) {
				return s.Run(ctx, red, token)
			})
			restarted(t, r)
			if r.Verdict.Class != tt.want {
				t.Errorf("want %s, got %s (%v)", tt.want, r.Verdict.Cell(), r.Events)
			}
			// Emptied well inside the victim's 10s lease, the lock let a second holder in:
			// its promise broken, not a lease outlived.
			if broke := r.Oracle.LockBroken > 0; broke != (tt.mode == faults.PersistNone) {
				t.Errorf("want the lock broken: %v; got %s (%+v)", tt.mode == faults.PersistNone, r.Verdict, r.Oracle.Violations)
			}
		})
	}
}
