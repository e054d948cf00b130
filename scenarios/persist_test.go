package scenarios_test

import (
	"fmt"
	"testing"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/results"
)

var yes, no = true, false

func lostWant(b *bool) string {
	if b == nil {
		return "either"
	}
	return fmt.Sprint(*b)
}

// restarted fails t unless the restart struck and came back.
func restarted(t *testing.T, r results.Run) {
	t.Helper()
	for _, e := range r.Events {
		if e.Fault == faults.RedisRestart && e.Err == "" {
			t.Logf("%s: %s", r.Verdict.Cell(), e.Detail)
			return
		}
	}
	t.Fatalf("the restart did not strike, or failed: %+v", r.Events)
}
