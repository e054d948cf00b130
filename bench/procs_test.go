package bench

import (
	"runtime"
	"testing"
)

// TestUseProcs: --procs wins, then GOMAXPROCS from the environment; otherwise Redis on
// this machine is left a CPU and an external one none.
func TestUseProcs(t *testing.T) {
	cpus := runtime.NumCPU()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	tests := []struct {
		name      string
		flag      int
		env       string
		redisHere bool
		want      int
	}{
		{"flag", 3, "", true, 3},
		{"flag over env", 2, "5", false, 2},
		{"env", 0, "5", true, 5}, // the runtime read it at start; here it is set by hand below
		{"redis here", 0, "", true, max(1, cpus-1)},
		{"external", 0, "", false, cpus},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runtime.GOMAXPROCS(cpus)
			t.Setenv("GOMAXPROCS", tt.env)
			if tt.env != "" {
				runtime.GOMAXPROCS(tt.want)
			}
			if got := useProcs(tt.flag, tt.redisHere); got != tt.want {
				t.Errorf("useProcs(%d, %v) with GOMAXPROCS=%q = %d, want %d", tt.flag, tt.redisHere, tt.env, got, tt.want)
			}
		})
	}
}
