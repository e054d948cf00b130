package scenarios

import (
	"testing"
	"time"
)

func TestParseThink(t *testing.T) {
	tests := []struct {
		in, out string // out "" means ParseThink must fail
	}{
		{"2ms", "2ms"},                         // bare duration is fixed
		{"fixed:1.5s", "1.5s"},                 // explicit fixed
		{"uniform:1ms-3ms", "uniform:1ms-3ms"}, // range
		{"longtail:1ms,1.5s,0.01", "longtail:1ms,1.5s,0.01"},
		{"uniform:3ms-1ms", ""},   // high below low
		{"longtail:1ms,1s,2", ""}, // share above one
		{"-1ms", ""},              // negative
		{"gaussian:1ms", ""},      // unknown distribution
		{"soon", ""},              // not a duration
	}
	for _, tt := range tests {
		th, err := ParseThink(tt.in)
		if tt.out == "" {
			if err == nil {
				t.Errorf("ParseThink(%q): want an error, got %s", tt.in, th)
			}
			continue
		}
		if err != nil || th.String() != tt.out {
			t.Errorf("ParseThink(%q): want %s, got %s, %v", tt.in, tt.out, th, err)
		}
	}
}

func TestThinkDraw(t *testing.T) {
	u, _ := ParseThink("uniform:1ms-3ms")
	lt, _ := ParseThink("longtail:1ms,1s,0.1")
	slow := 0
	for i := range 10000 {
		if d := u.Draw(7, i); d < time.Millisecond || d > 3*time.Millisecond {
			t.Fatalf("uniform draw %s out of range", d)
		}
		if u.Draw(7, i) != u.Draw(7, i) {
			t.Fatal("draws must repeat for the same seed and buyer")
		}
		if lt.Draw(7, i) == time.Second {
			slow++
		}
	}
	// 10% of 10,000 with a generous margin: the draw is a hash, not a coin.
	if slow < 850 || slow > 1150 {
		t.Errorf("long tail: want about 1000 slow holders of 10000, got %d", slow)
	}
}
