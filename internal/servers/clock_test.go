package servers

import (
	"context"
	"testing"
	"time"
)

// TestJumpClock: a server started with a movable clock expires a key early when its
// clock jumps past the key's expiry, and keeps its clock moved across a restart; a server
// started without one refuses the jump.
func TestJumpClock(t *testing.T) {
	for name, p := range providers(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			tg := start(t, WithClock(p))
			c := tg.Client(1)
			defer c.Close()
			if err := c.Set(ctx, "lock", "me", 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
			if err := tg.JumpClock(ctx, 4*time.Second); err != nil {
				t.Fatal(err)
			}
			if ttl := c.PTTL(ctx, "lock").Val(); ttl <= 0 || ttl > 6100*time.Millisecond {
				t.Errorf("after a 4s jump: want at most 6.1s left of 10s, got %s", ttl)
			}
			if err := tg.JumpClock(ctx, 7*time.Second); err != nil {
				t.Fatal(err)
			}
			if n := c.Exists(ctx, "lock").Val(); n != 0 {
				t.Errorf("after 11s of jumps: want the 10s key gone, got %d", n)
			}
			plain := start(t, p)
			if err := plain.JumpClock(ctx, time.Second); err == nil {
				t.Error("want a server without a movable clock to refuse the jump")
			}
		})
	}
}
