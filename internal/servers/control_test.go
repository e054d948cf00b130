package servers

import (
	"context"
	"testing"
	"time"
)

// providers are the embedded targets the control tests run on.
func providers(t *testing.T) map[string]Provider {
	ps := map[string]Provider{"process": Process{}}
	quiet()
	if err := dockerAnswers(context.Background()); err == nil {
		ps["container"] = Container{Image: image()}
	} else {
		t.Logf("container cases skipped: no Docker engine answers: %v", err)
	}
	return ps
}

func start(t *testing.T, p Provider) *Target {
	t.Helper()
	tg, err := p.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close(context.Background()) })
	return tg
}

// watchedControl says when a pause was carried out and when a resume began.
type watchedControl struct {
	control
	paused, resuming chan struct{}
}

func (w *watchedControl) pause(ctx context.Context) error {
	defer close(w.paused)
	return w.control.pause(ctx)
}

func (w *watchedControl) resume(ctx context.Context) error {
	close(w.resuming)
	return w.control.resume(ctx)
}

// TestPauseAndRestart: a paused server answers only once resumed; a restarted one has
// lost its data, and clients made before the restart reach it again.
func TestPauseAndRestart(t *testing.T) {
	for name, p := range providers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tg := start(t, p)
			c := tg.Client(2)
			defer c.Close()
			c.Set(ctx, "k", "v", 0)

			// The steps of the pause are watched, not guessed from a sleep: a ping sent
			// once the server is paused must not be answered before its resume began.
			steps := &watchedControl{control: tg.ctl, paused: make(chan struct{}), resuming: make(chan struct{})}
			tg.ctl = steps
			done := make(chan error, 1)
			go func() { done <- tg.Pause(ctx, 400*time.Millisecond) }()
			<-steps.paused
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatalf("ping across the pause: %v", err)
			}
			select {
			case <-steps.resuming:
			default:
				t.Error("the ping was answered while the server was paused")
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			tg.ctl = steps.control

			if err := tg.Restart(ctx, 0); err != nil {
				t.Fatal(err)
			}
			var err error
			for range 3 { // connections from before the restart fail once, then redial
				if err = c.Ping(ctx).Err(); err == nil {
					break
				}
			}
			if err != nil {
				t.Fatalf("ping after restart: %v", err)
			}
			if n := c.Exists(ctx, "k").Val(); n != 0 {
				t.Error("want the restarted server empty")
			}
		})
	}
}

// killStart notes when the server was killed and when it was started again.
type killStart struct {
	control
	killed, started chan time.Time
}

func (k *killStart) kill(ctx context.Context) error {
	err := k.control.kill(ctx)
	k.killed <- time.Now()
	return err
}

func (k *killStart) start(ctx context.Context) (string, error) {
	k.started <- time.Now()
	return k.control.start(ctx)
}

// TestDelayedRestart: a delayed restart keeps the server down for its downtime before
// starting it again, and no longer once the fault's context ends: the server then
// starts at once rather than stay dead.
func TestDelayedRestart(t *testing.T) {
	for name, p := range providers(t) {
		t.Run(name, func(t *testing.T) {
			tg := start(t, p)
			steps := &killStart{control: tg.ctl, killed: make(chan time.Time, 2), started: make(chan time.Time, 2)}
			tg.ctl = steps
			const down = 700 * time.Millisecond
			if err := tg.Restart(context.Background(), down); err != nil {
				t.Fatal(err)
			}
			if gap := (<-steps.started).Sub(<-steps.killed); gap < down {
				t.Errorf("started again %s after the kill, want at least %s", gap, down)
			}

			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- tg.Restart(ctx, time.Hour) }()
			<-steps.killed
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("a restart whose context ended kept the server down")
			}
			<-steps.started
			c := tg.Client(1)
			defer c.Close()
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Fatalf("ping after the cut-short downtime: %v", err)
			}
		})
	}
}

// TestFailover: a replica detached before a write and promoted in place of its dead
// primary serves the primary's clients without that write.
func TestFailover(t *testing.T) {
	for name, p := range providers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			primary, replica := start(t, p), start(t, p)
			c := primary.Client(2)
			defer c.Close()
			c.Set(ctx, "before", 1, 0)
			if err := replica.ReplicaOf(ctx, primary); err != nil {
				t.Fatal(err)
			}
			rc := replica.Client(1)
			defer rc.Close()
			waitFor(t, func() bool { return rc.Exists(ctx, "before").Val() == 1 })
			if err := replica.Detach(ctx); err != nil {
				t.Fatal(err)
			}
			c.Set(ctx, "after", 1, 0) // never reaches the replica
			if err := primary.Kill(ctx); err != nil {
				t.Fatal(err)
			}
			primary.Redirect(replica.Addr())
			var n int64
			var err error
			for range 3 {
				if n, err = c.Exists(ctx, "before", "after").Result(); err == nil {
					break
				}
			}
			if err != nil || n != 1 {
				t.Errorf("after failover: want only the replicated key, got %d keys, %v", n, err)
			}
		})
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition never held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
