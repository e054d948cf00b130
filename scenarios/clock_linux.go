package scenarios

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// sleeper is a timerfd read through the runtime's poller: the kernel's timer wakes the
// poller at its time to the microsecond, whatever the poller's own timeout (whole
// milliseconds), and the goroutine waiting on it holds no CPU's turn meanwhile, as a
// thread's nanosleep would until the runtime took it back.
type sleeper struct {
	fd int
	f  *os.File
}

// newSleeper is nil where the kernel refuses a timerfd: the clock then waits on the
// runtime's timer alone.
func newSleeper() *sleeper {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil
	}
	// A non-blocking descriptor: os.NewFile puts it in the poller.
	return &sleeper{fd: fd, f: os.NewFile(uintptr(fd), "stockbench-pacer-timerfd")}
}

// sleep returns once d has passed (or early, on an error, which until makes up).
func (s *sleeper) sleep(d time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(max(d, 1)))}
	if unix.TimerfdSettime(s.fd, 0, &spec, nil) != nil {
		return
	}
	var expirations [8]byte
	_, _ = s.f.Read(expirations[:])
}

func (s *sleeper) close() { _ = s.f.Close() }
