//go:build !linux

package scenarios

import "time"

// sleeper: off Linux the clock waits on the runtime's timer alone.
type sleeper struct{}

func newSleeper() *sleeper             { return nil }
func (s *sleeper) sleep(time.Duration) {}
func (s *sleeper) close()              {}
