package lockimpl

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeLocker grants the lock on try number grantOn (0: never), or fails with err.
type fakeLocker struct {
	grantOn int
	err     error
	tries   int
}

func (f *fakeLocker) TryLock(context.Context, string, time.Duration) (Lease, error) {
	f.tries++
	if f.err != nil {
		return nil, f.err
	}
	if f.tries == f.grantOn {
		return fakeLease{}, nil
	}
	return nil, ErrNotAcquired
}

type fakeLease struct{}

func (fakeLease) Release(context.Context) error { return nil }

func TestRetryAcquire(t *testing.T) {
	boom := errors.New("boom")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name      string
		ctx       context.Context
		locker    *fakeLocker
		retry     Retry
		wantErr   error
		wantTries int
	}{
		// Granted on the third try: two sleeps, no error.
		{"granted", context.Background(), &fakeLocker{grantOn: 3}, Retry{Interval: time.Millisecond, Timeout: time.Minute}, nil, 3},
		// Never granted: gives up with ErrNotAcquired once the timeout passes.
		{"timeout", context.Background(), &fakeLocker{}, Retry{Interval: 5 * time.Millisecond, Timeout: 20 * time.Millisecond}, ErrNotAcquired, -1},
		// Abandon says stop after the first failed try.
		{"abandoned", context.Background(), &fakeLocker{}, Retry{Interval: time.Millisecond, Timeout: time.Minute,
			Abandon: func(context.Context) (bool, error) { return true, nil }}, ErrAbandoned, 1},
		// An error from Abandon ends the loop with it.
		{"abandon fails", context.Background(), &fakeLocker{}, Retry{Interval: time.Millisecond, Timeout: time.Minute,
			Abandon: func(context.Context) (bool, error) { return false, boom }}, boom, 1},
		// A try that fails for another reason than a held lock is not retried.
		{"try fails", context.Background(), &fakeLocker{err: boom}, Retry{Interval: time.Millisecond, Timeout: time.Minute}, boom, 1},
		// A cancelled context ends the wait.
		{"cancelled", cancelled, &fakeLocker{}, Retry{Interval: time.Minute, Timeout: time.Hour}, context.Canceled, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lease, tries, err := tt.retry.Acquire(tt.ctx, tt.locker, "k", time.Second)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err: want %v, got %v", tt.wantErr, err)
			}
			if (err == nil) != (lease != nil) {
				t.Errorf("lease %v with err %v", lease, err)
			}
			if tt.wantTries >= 0 && tries != tt.wantTries {
				t.Errorf("tries: want %d, got %d", tt.wantTries, tries)
			}
			if tries != tt.locker.tries {
				t.Errorf("reported %d tries, made %d", tries, tt.locker.tries)
			}
		})
	}
}

func TestRetryDefaults(t *testing.T) {
	var r Retry
	if exp, got := DefaultRetryInterval, r.interval(); exp != got {
		t.Errorf("interval: want %s, got %s", exp, got)
	}
	if exp, got := DefaultRetryTimeout, r.timeout(); exp != got {
		t.Errorf("timeout: want %s, got %s", exp, got)
	}
}
