// Package salestest puts a lock or queue design of your own through stockbench's sales
// from your own go test, and fails the test when a verdict is worse than the one you
// claim for it.
//
// It is to a Redis lock what testing/fstest.TestFS is to a file system: hand it your
// design and what you claim it earns under each fault (by default SAFE everywhere), and it
// starts Redis the way the stockbench command does (see [StartRedis]), runs the sale with
// no fault and under every fault that applies, and reports the verdict table, the findings
// and a run directory that `stockbench report DIR` turns into report.html.
//
//	func TestUnderFlashSale(t *testing.T) {
//		salestest.Lock(t, salestest.LockDesign{
//			Impl:   lockimpl.Impl{Name: "mylock", NewLocker: func(e lockimpl.Env) lockimpl.Locker { return mylock.New(e.Locks[0]) }},
//			Claims: salestest.Claims{faults.ClientPause: oracle.ClassOversold}, // unlisted: SAFE
//		})
//	}
//
// With -short only the faults that need no server of their own run (the holder's or the
// worker's own: slow work, pauses and crashes), beside the sale with no fault.
//
// The kit compiles the container engine's client even when you only call [UseRedis]:
// [StartRedis] starts Redis in a container as the command does, and which function a
// test calls cannot change what Go compiles. It never compiles asynq or the report's
// plotting (TestImportBudget in package scenarios holds it to that).
package salestest

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/lockimpl"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// NoFault is the key of Claims for the sale with no fault.
const NoFault faults.Kind = faults.None

// Claims is the worst verdict class a design admits, by fault (NoFault for none): a run
// fails when its class is more severe (see oracle.Class.Admits). A design whose Impl
// documents what it earns (lockimpl.Impl.Documented) also fails a run whose class is not
// one of those, as the command's matrix marks it. A fault not listed is claimed as the
// fault it extends (reclaimers, the evictions and consumer-churn kill the worker as
// worker-crash does: faults.Spec.Extends), and SAFE otherwise. OVERSOLD admits
// everything but UNKNOWN, which no claim admits: a sale whose final state could not be
// read has no verdict.
type Claims map[faults.Kind]oracle.Class

// claim is what c claims under kind.
func (c Claims) claim(kind faults.Kind) oracle.Class {
	if k, ok := c[kind]; ok {
		return k
	}
	if spec, ok := faults.Lookup(kind); ok && spec.Extends() != "" {
		return c.claim(spec.Extends())
	}
	return oracle.ClassSafe
}

// check says what is wrong with c for sales of a.
func (c Claims) check(a faults.Applies) error {
	for kind, class := range c {
		if kind != NoFault && !slices.Contains(faults.Kinds(a), kind) {
			return fmt.Errorf("claim under %q: not a fault of %s sales (faults: %s)", kind, a, kindList(faults.Kinds(a)))
		}
		if _, ok := class.Rank(); !ok {
			return fmt.Errorf("claim under %s: %q is no class a sale can earn (classes: %s)", kind, class, kindList(oracle.Classes()))
		}
	}
	return nil
}

// LockDesign is a lock design and what its author claims for it. Impl must be set; zero
// fields take the defaults named in their comments.
type LockDesign struct {
	// Impl is the design; it need not be registered.
	Impl lockimpl.Impl
	// Claims is the worst class claimed under each fault. Default: SAFE everywhere.
	Claims Claims
	// Sale is the sale the design runs in; its Faults and Prefix are set per run.
	// Default: the fault-sale preset, the sale `stockbench matrix` runs (100 buyers, 30
	// units, a 1s TTL).
	Sale scenarios.FlashSale
	// Faults are the faults to run besides no fault. Default: every lock fault, or with
	// -short those that need no server of their own.
	Faults []faults.Kind
	// Redis is where the sales run. Default: a server started for this call (StartRedis).
	Redis *Redis
}

// QueueDesign is a queue design and what its author claims for it, as LockDesign is for
// a lock.
type QueueDesign struct {
	Impl   queueimpl.Impl
	Claims Claims
	// Sale defaults to the queue-sale preset (200 orders for 150 units, 4 workers, a
	// naive fulfil: set Sale.Fulfil to scenarios.Idempotent for one that applies each
	// order once).
	Sale   scenarios.QueueSale
	Faults []faults.Kind
	Redis  *Redis
}

// Lock runs d's design through flash sales with no fault and under each fault, in
// parallel subtests named after the faults, and fails each whose verdict is worse than
// claimed; the test then fails with the table of every verdict.
func Lock(t *testing.T, d LockDesign) {
	t.Helper()
	sale := d.Sale
	if sale.Buyers == 0 {
		sale = preset(t, scenarios.Lookup, "fault-sale")
	}
	subject{
		design: d.Impl.Name, valid: d.Impl.Validate(), applies: faults.Locks, claims: d.Claims, kinds: d.Faults, redis: d.Redis,
		need: rig.ForLock(d.Impl, nil, sale.WithDefaults().Conns),
		run: func(ctx context.Context, r scenarios.Redis, each func(*scenarios.Sale)) (results.Run, error) {
			s := sale
			each(&s.Sale)
			run, err := s.Run(ctx, r, d.Impl)
			v := s.Value(d.Impl.Name) // the record says what the sale was, as the command's does
			run.Sale = &v
			return run, err
		},
	}.check(t)
}

// Queue runs d's design through queue sales as Lock does a lock's.
func Queue(t *testing.T, d QueueDesign) {
	t.Helper()
	sale := d.Sale
	if sale.Buyers == 0 {
		sale = preset(t, scenarios.LookupQueue, "queue-sale")
		sale.Fulfil = d.Sale.Fulfil
	}
	subject{
		design: d.Impl.Name, valid: d.Impl.Validate(), applies: faults.Queues, claims: d.Claims, kinds: d.Faults, redis: d.Redis,
		need: rig.ForQueue(nil, sale.WithDefaults().Conns),
		run: func(ctx context.Context, r scenarios.Redis, each func(*scenarios.Sale)) (results.Run, error) {
			s := sale
			each(&s.Sale)
			run, err := s.Run(ctx, r, d.Impl)
			v := s.Value(d.Impl.Name) // the record says what the sale was, as the command's does
			run.Sale = &v
			return run, err
		},
	}.check(t)
}
