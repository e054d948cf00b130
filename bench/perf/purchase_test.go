package perf

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestBenchmarkP50(t *testing.T) {
	out := []byte(`"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
"SET k v NX PX 30000","20408.16","0.049","0.008","0.063","0.087","0.279","0.415"
`)
	if got, err := benchmarkP50(out); err != nil || got != 63*time.Microsecond {
		t.Errorf("benchmarkP50 = %s, %v; want 63µs", got, err)
	}
	for _, bad := range []string{"", "ERR unknown command\n", `"test","rps"` + "\n" + `"PING","1"` + "\n"} {
		if _, err := benchmarkP50([]byte(bad)); err == nil {
			t.Errorf("benchmarkP50(%q) read a median", bad)
		}
	}
}

// A purchase's commands per unit sold: one script told from another, a pipeline by its
// first command, and what fewer than one unit in two sent (a script's first load) left
// out.
func TestCounterPerUnit(t *testing.T) {
	c := &counter{by: map[string]*trip{}}
	for range 100 {
		c.add(redis.NewCmd(nil, "evalsha", "abc", 1, "stock"), nil)
		c.add(redis.NewCmd(nil, "get", "stock"), nil)
		c.add(redis.NewCmd(nil, "get", "stock"), nil)
		set, push := redis.NewCmd(nil, "set", "stock", 3), redis.NewCmd(nil, "rpush", "orders", "1")
		c.add(set, []redis.Cmder{set, push})
	}
	c.add(redis.NewCmd(nil, "evalsha", "def", 0), nil)
	c.add(redis.NewCmd(nil, "script", "load", "return 1"), nil)
	for range 100 { // a connection's set-up
		c.add(redis.NewCmd(nil, "client", "maint_notifications", "on"), nil)
	}
	got := describe(c.perUnit(100))
	want := "EVALSHA ×1 + GET ×2 + SET (a pipeline of 2, which redis-benchmark sends as its first) ×1"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
