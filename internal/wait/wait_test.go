package wait

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"
)

func TestSleep(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tt := range []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want error
	}{
		{"passes", context.Background(), time.Millisecond, nil},
		{"nothing to wait, even with an ended context", ended, 0, nil},
		{"ends with its context", ended, time.Hour, context.Canceled},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if exp, got := tt.want, Sleep(tt.ctx, tt.d); !errors.Is(got, exp) {
				t.Errorf("want %v, got %v", exp, got)
			}
		})
	}
}

func TestEvery(t *testing.T) {
	calls := 0
	Every(context.Background(), time.Millisecond, func() bool { calls++; return calls < 3 })
	if exp, got := 3, calls; exp != got {
		t.Errorf("want %d calls, got %d", exp, got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
	defer cancel()
	Every(ctx, time.Hour, func() bool { t.Error("called before its first tick"); return true })
}

func TestTimedOut(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{context.DeadlineExceeded, true},
		{fmt.Errorf("read: %w", os.ErrDeadlineExceeded), true},
		{context.Canceled, false},
		{errors.New("connection refused"), false},
	} {
		if got := TimedOut(tt.err); got != tt.want {
			t.Errorf("%v: want %v, got %v", tt.err, tt.want, got)
		}
	}
}
