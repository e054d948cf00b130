package rig_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/internal/servers/rig"
	"github.com/stockbench/stockbench/internal/servers/rig/rigtest"
	"github.com/stockbench/stockbench/scenarios"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestAppBlackholeCutsOneApp: under app-blackhole every application instance reaches
// the lock server through a path of its own, and the victim's instance is cut off for
// the fault's length, its connections open, while the sale's own instance carries on;
// once it is over the victim's instance reaches the server again.
func TestAppBlackholeCutsOneApp(t *testing.T) {
	h := rigtest.Harness(t)
	plan := faults.Plan{{Kind: faults.AppBlackhole, Nth: 1}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := rig.On(ctx, h, rig.Need{Nodes: 1, Faults: plan, Conns: 2}, func(ctx context.Context, red scenarios.Redis) (struct{}, error) {
		if red.AppLocks == nil {
			t.Fatal("no paths of the instances' own under app-blackhole")
		}
		second, err := red.AppLocks(1)
		if err != nil {
			t.Fatal(err)
		}
		own, cut := red.Locks[0], second[0]
		for name, c := range map[string]redis.UniversalClient{"app 1": own, "app 2": cut} {
			if err := c.Ping(ctx).Err(); err != nil {
				t.Fatalf("%s before the fault: %v", name, err)
			}
		}
		in, err := faults.New(plan, red.Servers, 400*time.Millisecond, "{rig:perapp}", 1)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(ctx); err != nil {
			t.Fatal(err)
		}
		v := in.Held(0, 1) // the first holder, served by the second instance: 600 ms cut off
		time.Sleep(50 * time.Millisecond)
		if err := own.Ping(ctx).Err(); err != nil {
			t.Errorf("app 1 while app 2 is cut off: %v", err)
		}
		answered := make(chan error, 1)
		go func() { answered <- cut.Ping(ctx).Err() }()
		select {
		case err := <-answered:
			t.Errorf("app 2 reached the lock server while cut off (%v)", err)
		case <-time.After(300 * time.Millisecond):
		}
		if err := v.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		in.Stop()
		<-answered // its connection closed as the cut ended, or the reply came late
		if err := cut.Ping(ctx).Err(); err != nil {
			t.Errorf("app 2 once the fault is over: %v", err)
		}
		ev := in.Events()
		if len(ev) != 1 || ev[0].Err != "" || !strings.Contains(ev[0].Detail, "between app 2 and the lock servers") {
			t.Errorf("the record: want app 2 cut off, got %+v", ev)
		}
		return struct{}{}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
