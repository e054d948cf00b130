package bench_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/queueimpl"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/results/gate"
	"github.com/stockbench/stockbench/scenarios"
)

// TestMain quiets go-redis's log of dials to a server still starting, which the harness
// retries.
func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	os.Exit(m.Run())
}

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// slower is a build of a queue design whose handler works d longer per order before
// its ack.
func slower(impl queueimpl.Impl, d time.Duration) queueimpl.Impl {
	build := impl.New
	impl.New = func(env queueimpl.Env) queueimpl.Queue { return slowQueue{build(env), d} }
	return impl
}

type slowQueue struct {
	queueimpl.Queue
	d time.Duration
}

func (q slowQueue) Setup(ctx context.Context) error {
	if s, ok := q.Queue.(queueimpl.Setupper); ok {
		return s.Setup(ctx)
	}
	return nil
}

func (q slowQueue) Dequeue(ctx context.Context, worker string, wait time.Duration) (queueimpl.Task, error) {
	t, err := q.Queue.Dequeue(ctx, worker, wait)
	if err != nil {
		return nil, err
	}
	return slowTask{t, q.d}, nil
}

type slowTask struct {
	queueimpl.Task
	d time.Duration
}

func (t slowTask) Ack(ctx context.Context) error {
	time.Sleep(t.d)
	return t.Task.Ack(ctx)
}

// TestGateByTest runs the queue sale of the default matrix with list (the reference) and
// stream, five times each per run as make bench does, on a real Redis: a second run of
// the same build passes the gate's soft rules by test, and a build whose stream handler
// works 5 ms longer per order (the sale's 1 ms of work, six times over) fails on
// stream's median and sales/s, with the test's figures in the line.
func TestGateByTest(t *testing.T) {
	if raced {
		// Raced, beside the other packages, list's own speed moved from 1,200 to 500
		// sales/s between the base and the slower build, and the slower stream was not
		// flagged: speed is make test's to assert.
		t.Skip("speed under the race detector says nothing; make test asserts it")
	}
	sale, err := scenarios.LookupQueue("queue-sale")
	if err != nil {
		t.Fatal(err)
	}
	list, err1 := queueimpl.Lookup("list")
	stream, err2 := queueimpl.Lookup("stream")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	run := func(streamImpl queueimpl.Impl) *results.File {
		t.Helper()
		out := t.TempDir()
		jobs := []bench.Job{bench.QueueJob{Sale: sale, Impl: list}, bench.QueueJob{Sale: sale, Impl: streamImpl}}
		if code := bench.Execute(context.Background(), bench.Options{Out: out, Repeat: 5}, jobs, io.Discard, io.Discard).Code; code != 0 {
			t.Fatalf("exit code %d", code)
		}
		paths, _ := filepath.Glob(filepath.Join(out, "*", "results.json"))
		if len(paths) != 1 {
			t.Fatalf("want one record, got %v", paths)
		}
		f, err := results.Read(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range f.Runs {
			if r.Spread == nil || len(r.Spread.P50Us) != 5 {
				t.Fatalf("%s: want the speed of 5 runs, got %+v", r.Key(), r.Spread)
			}
		}
		return f
	}
	rules, err := gate.ReadRules(filepath.Join("..", "baseline", "gate.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := run(stream)
	// A record judged against itself passes: a gate that flags what did not change at
	// all fails here, whatever the machine's load.
	if res := gate.Compare(base, base, rules); !res.Passed() {
		t.Errorf("a record against itself: %v", res.Regressions)
	}
	// A second run of the same build passing is a rate that load moves: docs/ci.md
	// measured 0 false alarms in 10 pairs on a quiet machine, but beside make test's other
	// packages list's five runs and stream's five meet different loads, and three second
	// runs in a row were flagged once (stream's sales/s -25% to -31%). So it is measured
	// and said here, not asserted; the slower build below must be flagged every time.
	for try := 1; try <= 3; try++ {
		res := gate.Compare(base, run(stream), rules)
		if res.Passed() {
			break
		}
		t.Logf("the same build, second run %d flagged (a false alarm under load): %v", try, res.Regressions)
	}
	// The slower build is flagged: a rate too, beside make test's other packages (base
	// list's five p50s once read 48 to 152 ms, which left a slower stream's Welch test at
	// p 0.025 of the 0.01 it needs), so the slower build runs up to three times and must
	// be flagged by both figures in one of them; a gate that cannot see the slowdown
	// fails all three.
	var slow *results.File
	var got string
	for try := 1; try <= 3; try++ {
		slow = run(slower(stream, 5*time.Millisecond))
		got = strings.Join(gate.Compare(base, slow, rules).Regressions, "\n")
		if flagged(got) {
			break
		}
		t.Logf("the slower build, run %d not flagged by both figures (under load): %s", try, got)
	}
	if !flagged(got) {
		t.Errorf("a stream 5 ms slower per order, three runs: want regressions of its p50 and its sales/s, got:\n%s", got)
	}
	if t.Failed() {
		for _, f := range []*results.File{base, slow} {
			for _, r := range f.Runs {
				t.Logf("%s %s: p50s %v, sales/s %.0f", f.ID, r.Key(), r.Spread.P50Us, r.Spread.SalesPerSec)
			}
		}
	}
	t.Logf("a stream 5 ms slower per order:\n%s", got)
}

// flagged reports whether the gate's regressions name both of the slower stream's figures.
func flagged(regressions string) bool {
	for _, want := range []string{"queue-sale (naive fulfil)/stream/none: p50 ", "queue-sale (naive fulfil)/stream/none: sales/s "} {
		if !strings.Contains(regressions, want) {
			return false
		}
	}
	return true
}
