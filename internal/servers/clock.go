package servers

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// A server started with a movable clock runs with the clock shim (clockshim/stockclock.c)
// preloaded: its wall clock is the host's plus an offset the harness writes into a file
// the shim reads. Redis keeps a key's expiry as an absolute wall-clock time, so moving the
// clock forward expires keys early, as a clock that NTP or an operator steps does.

//go:embed clockshim/stockclock.c
var clockSource []byte

// Where the shim and its offset file live inside a container.
const (
	containerShim  = "/usr/lib/stockclock.so"
	containerClock = "/tmp/stockclock"
)

var shim struct {
	once sync.Once
	path string
	err  error
}

// clockShim is the shim built for this machine, compiled once with the C compiler into
// the user's cache; a container runs the same file, its libraries being the host's.
func clockShim() (string, error) {
	shim.once.Do(func() {
		sum := sha256.Sum256(clockSource)
		dir, err := os.UserCacheDir()
		if err != nil {
			dir = os.TempDir()
		}
		dir = filepath.Join(dir, "stockbench")
		path := filepath.Join(dir, "stockclock-"+hex.EncodeToString(sum[:6])+".so")
		if _, err := os.Stat(path); err == nil {
			shim.path = path
			return
		}
		cc, err := exec.LookPath("cc")
		if err != nil {
			if cc, err = exec.LookPath("gcc"); err != nil {
				shim.err = errors.New("moving a server's clock needs a C compiler (cc) to build its clock shim; install gcc")
				return
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			shim.err = fmt.Errorf("clock shim: %w", err)
			return
		}
		src := filepath.Join(dir, "stockclock.c")
		if err := os.WriteFile(src, clockSource, 0o644); err != nil {
			shim.err = fmt.Errorf("clock shim: %w", err)
			return
		}
		tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", tmp, src).CombinedOutput(); err != nil {
			shim.err = fmt.Errorf("clock shim: %s: %w: %s", cc, err, out)
			return
		}
		if err := os.Rename(tmp, path); err != nil {
			shim.err = fmt.Errorf("clock shim: %w", err)
			return
		}
		shim.path = path
	})
	return shim.path, shim.err
}

// WithClock is p with servers whose wall clock Target.JumpClock moves; nil for a
// provider that cannot give them (the user's own server).
func WithClock(p Provider) Provider {
	switch p := p.(type) {
	case Container:
		p.Clock = true
		return p
	case Process:
		p.Clock = true
		return p
	}
	return nil
}

// clocked is a control whose server's clock can be set off the host's.
type clocked interface {
	setClock(ctx context.Context, offset time.Duration) error
}

// JumpClock moves the server's wall clock forward by d, for good, and waits until the
// server's TIME shows it: the keys whose expiry the jump passes expire. It fails on a
// server not started with a movable clock (WithClock).
func (t *Target) JumpClock(ctx context.Context, d time.Duration) error {
	c, ok := t.ctl.(clocked)
	if !ok || !t.clock {
		return fmt.Errorf("target: jump clock: the server was not started with a movable clock")
	}
	cl := t.Client(1)
	defer cl.Close()
	before, err := cl.Time(ctx).Result()
	if err != nil {
		return fmt.Errorf("target: jump clock: read TIME: %w", err)
	}
	t.offset += d
	if err := c.setClock(ctx, t.offset); err != nil {
		return fmt.Errorf("target: jump clock: %w", err)
	}
	// The shim reads the offset again within a millisecond.
	return await(ctx, 5*time.Second, "the server's clock to move", func(ctx context.Context) (bool, error) {
		now, err := cl.Time(ctx).Result()
		return err == nil && now.Sub(before) >= d, nil
	})
}

// clockEnv is the environment that preloads the shim at shimPath, reading file.
func clockEnv(shimPath, file string) []string {
	return []string{"LD_PRELOAD=" + shimPath, "STOCKCLOCK_FILE=" + file}
}

// writeOffset writes offset where the shim reads it, whole: a reader never sees half.
func writeOffset(file string, offset time.Duration) error {
	tmp := file + ".new"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(int64(offset), 10)), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
