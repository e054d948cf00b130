package faults

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer records when it was restarted.
type fakeServer struct {
	name     string
	mu       *sync.Mutex
	restarts *[]string
}

func (f fakeServer) Restart(_ context.Context, down time.Duration) error {
	f.did(f.name, down)
	return nil
}

func (f fakeServer) Pause(_ context.Context, d time.Duration) error {
	f.did("pause "+f.name, d)
	return nil
}

// did notes what was done to the server, and for how long when it lasted.
func (f fakeServer) did(what string, d time.Duration) {
	if d > 0 {
		what += " " + d.String()
	}
	f.mu.Lock()
	*f.restarts = append(*f.restarts, what)
	f.mu.Unlock()
}

func (fakeServer) Kill(context.Context) error                     { return nil }
func (fakeServer) Redirect(string)                                {}
func (f fakeServer) Addr() string                                 { return f.name }
func (fakeServer) Detach(context.Context) error                   { return nil }
func (fakeServer) JumpClock(context.Context, time.Duration) error { return nil }

// strikeFakes runs plan on nodes fake lock servers named a, b, c... for a victim that
// holds until its fault is over, and returns what was done to them.
func strikeFakes(t *testing.T, plan string, nodes int) (*Injector, []string) {
	t.Helper()
	var mu sync.Mutex
	var did []string
	var srv Servers
	for i := range nodes {
		srv.Locks = append(srv.Locks, fakeServer{name: string(rune('a' + i)), mu: &mu, restarts: &did})
	}
	srv.Lock = srv.Locks[0]
	p, err := Parse(plan)
	if err != nil {
		t.Fatal(err)
	}
	in, err := New(p, srv, 100*time.Millisecond, "{t}", 1)
	if err != nil {
		t.Fatal(err)
	}
	in.Start(context.Background())
	if err := in.Held(0, 0).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	in.Stop()
	mu.Lock()
	defer mu.Unlock()
	return in, slices.Clone(did)
}

// A restart or a pause strikes the first lock server, or its servers=k first at once
// (a restart kept down for=), and says how many of how many it struck.
func TestServersStruck(t *testing.T) {
	for _, tt := range []struct {
		plan  string
		nodes int
		want  string
		says  string
	}{
		{"redis-restart:nth=1", 3, "a", "lock server killed and restarted empty"},
		{"redis-restart:nth=1:servers=2", 3, "a b", "2 of 3 lock servers killed and restarted"},
		{"redis-restart:nth=1:servers=3:for=40ms", 5, "a 40ms b 40ms c 40ms", "3 of 5 lock servers killed, kept down 40ms, and restarted"},
		{"redis-pause:nth=1:for=30ms:servers=2", 5, "pause a 30ms pause b 30ms", "2 of 5 lock servers paused 30ms"},
		{"redis-pause:nth=1:for=30ms", 1, "pause a 30ms", "lock server paused 30ms"},
	} {
		in, did := strikeFakes(t, tt.plan, tt.nodes)
		slices.Sort(did) // struck at once, in no order
		if got := strings.Join(did, " "); got != tt.want {
			t.Errorf("%s over %d: want %q, got %q", tt.plan, tt.nodes, tt.want, got)
		}
		if ev := in.Events(); len(ev) != 1 || !strings.Contains(ev[0].Detail, tt.says) {
			t.Errorf("%s over %d: want an event saying %q, got %+v", tt.plan, tt.nodes, tt.says, ev)
		}
	}
}

// A rolling restart restarts a majority of the lock servers, in order, one gap apart,
// while the victim waits; the others stay up. It needs every lock server.
func TestRollingRestart(t *testing.T) {
	for _, tt := range []struct {
		nodes int
		want  string
	}{{1, "a"}, {3, "a b"}, {5, "a b c"}} {
		began := time.Now()
		in, restarts := strikeFakes(t, "rolling-restart:nth=1:for=20ms", tt.nodes)
		majority := tt.nodes/2 + 1
		if got := strings.Join(restarts, " "); got != tt.want {
			t.Errorf("%d servers: want %q restarted, got %q", tt.nodes, tt.want, got)
		}
		if took := time.Since(began); took < time.Duration(majority)*20*time.Millisecond {
			t.Errorf("%d servers: the victim waited %s, less than %d gaps", tt.nodes, took, majority)
		}
		ev := in.Events()
		if len(ev) != 1 || !strings.Contains(ev[0].Detail, "restarted empty in turn, 20ms apart") {
			t.Errorf("%d servers: want one event of the restarts, got %+v", tt.nodes, ev)
		}
	}
	plan, _ := Parse("rolling-restart")
	if _, err := New(plan, Servers{Lock: fakeServer{}}, time.Second, "{t}", 1); err == nil || !strings.Contains(err.Error(), "every lock server") {
		t.Errorf("want a rolling restart refused without every lock server, got %v", err)
	}
}

// A step fault asks for its step, and strikes the Nth report of it (not of another
// step), with half a visibility timeout of grace, and records it.
func TestStepTerm(t *testing.T) {
	plan, err := Parse("step-term:nth=3")
	if err != nil {
		t.Fatal(err)
	}
	in, err := New(plan, Servers{}, time.Second, "{t}", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Steps(); len(got) != 1 || got[0] != DefaultStep {
		t.Fatalf("want the adapter asked for %s, got %v", DefaultStep, got)
	}
	for i, want := range []bool{false, false, true, false} {
		if _, strike := in.Stepped("prepared", "holding order 9"); strike {
			t.Errorf("struck at a step the plan does not name")
		}
		grace, strike := in.Stepped(DefaultStep, "holding order 7")
		if strike != want || (strike && grace != 500*time.Millisecond) {
			t.Errorf("report %d: want struck %v, got %v with grace %s", i+1, want, strike, grace)
		}
	}
	if ev := in.Events(); len(ev) != 1 || !strings.Contains(ev[0].Detail, "at step dequeued (holding order 7, its report 3) sent SIGTERM, SIGKILL 500ms later") {
		t.Errorf("want the strike recorded, got %+v", ev)
	}
	if len(in.NotFired()) != 0 {
		t.Errorf("a step fault that struck is not unfired: %v", in.NotFired())
	}
	none, _ := New(nil, Servers{}, time.Second, "{t}", 1)
	if none.Steps() != nil {
		t.Errorf("a plan without a step fault asks for no steps")
	}
}
