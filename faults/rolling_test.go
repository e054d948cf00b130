package faults

import (
	"context"
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

func (f fakeServer) Restart(context.Context) error {
	f.mu.Lock()
	*f.restarts = append(*f.restarts, f.name)
	f.mu.Unlock()
	return nil
}
func (fakeServer) Pause(context.Context, time.Duration) error     { return nil }
func (fakeServer) Kill(context.Context) error                     { return nil }
func (fakeServer) Redirect(string)                                {}
func (f fakeServer) Addr() string                                 { return f.name }
func (fakeServer) Detach(context.Context) error                   { return nil }
func (fakeServer) JumpClock(context.Context, time.Duration) error { return nil }

// A rolling restart restarts a majority of the lock servers, in order, one gap apart,
// while the victim waits; the others stay up. It needs every lock server.
func TestRollingRestart(t *testing.T) {
	for _, tt := range []struct {
		nodes int
		want  string
	}{{1, "a"}, {3, "a b"}, {5, "a b c"}} {
		var mu sync.Mutex
		var restarts []string
		var srv Servers
		for i := range tt.nodes {
			s := fakeServer{name: string(rune('a' + i)), mu: &mu, restarts: &restarts}
			srv.Locks = append(srv.Locks, s)
		}
		srv.Lock = srv.Locks[0]
		plan, err := Parse("rolling-restart:nth=1:for=20ms")
		if err != nil {
			t.Fatal(err)
		}
		in, err := New(plan, srv, 100*time.Millisecond, "{t}", 1)
		if err != nil {
			t.Fatal(err)
		}
		in.Start(context.Background())
		began := time.Now()
		v := in.Held(0, 0)
		if err := v.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		in.Stop()
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
