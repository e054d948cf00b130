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

// TestRestartInsideContainer: under the image's keeper a restart kills the server inside
// its container and starts it again there: the same container at the same address, a
// new server, with what its persistence kept.
func TestRestartInsideContainer(t *testing.T) {
	needDocker(t)
	ctx := context.Background()
	tg := start(t, Container{Image: image(), Args: []string{"--appendonly", "yes", "--appendfsync", "always"}})
	ctl := tg.ctl.(*containerCtl)
	first, keeper := ctl.localPID(ctx)
	if !keeper {
		t.Skipf("image %s does not run the keeper first (make redis-image builds one that does)", image())
	}
	if !tg.RestartsInPlace(ctx) {
		t.Error("a container under the keeper does not say it restarts in place")
	}
	before, addr := childOf(first), tg.Addr()
	c := tg.Client(2)
	defer c.Close()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if again, _ := ctl.localPID(ctx); again != first || tg.Addr() != addr {
		t.Errorf("the container was replaced: first process %d, then %d; address %s, then %s", first, again, addr, tg.Addr())
	}
	if after := childOf(first); after == before || after == 0 {
		t.Errorf("server pid %d before the restart, %d after: want a new one", before, after)
	}
	var got string
	var err error
	for range 3 { // connections from before the restart fail once, then redial
		if got, err = c.Get(ctx, "k").Result(); err == nil {
			break
		}
	}
	if got != "v" {
		t.Errorf("after a restart with appendfsync always: k = %q, %v; want v", got, err)
	}
	// A rolling restart kills first and restarts later: the second kill finds nothing to
	// kill, and must not take the container with it.
	if err := tg.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tg.Restart(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if again, _ := ctl.localPID(ctx); again != first {
		t.Errorf("kill then restart replaced the container: first process %d, then %d", first, again)
	}
}

// BenchmarkRestart times Target.Restart(ctx, 0) on a redis-server process and in a
// container, and reports their ratio measured in this one run: with the keeper a
// container's restart costs about what a process's does (the engine's stop and start,
// without it, cost 0.5 to 2.5 s). go test -run '^$' -bench Restart ./internal/servers
func BenchmarkRestart(b *testing.B) {
	quiet()
	if err := dockerAnswers(context.Background()); err != nil {
		b.Skipf("no Docker engine answers: %v", err)
	}
	ctx := context.Background()
	var took [2]time.Duration
	for i, p := range []Provider{Process{}, Container{Image: image()}} {
		tg, err := p.Start(ctx)
		if err != nil {
			b.Fatal(err)
		}
		began := time.Now()
		for range b.N {
			if err := tg.Restart(ctx, 0); err != nil {
				b.Fatal(err)
			}
		}
		took[i] = time.Since(began)
		tg.Close(ctx)
	}
	b.ReportMetric(float64(took[0].Microseconds())/float64(b.N)/1000, "process-ms/restart")
	b.ReportMetric(float64(took[1].Microseconds())/float64(b.N)/1000, "container-ms/restart")
	b.ReportMetric(float64(took[1])/float64(took[0]), "container/process")
}
