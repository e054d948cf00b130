package bench

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// CPUProfile starts a CPU profile of this process into path and returns what ends it;
// a path that cannot be written is an error naming --cpuprofile, and leaves no file.
func CPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
