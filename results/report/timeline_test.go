package report

import (
	"strings"
	"testing"
	"time"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestTimelineSaysWhatTheFaultDid: a fault of one moment (an eviction, a death) is a
// marker on the task's timeline whose tooltip says what it did, which keys went and
// whose task, as a fault that lasted says it on its shaded span.
func TestTimelineSaysWhatTheFaultDid(t *testing.T) {
	did := "the queue server evicted the lease keys asynq:{q}:lease while the worker holding order 4 works on it; that worker dies"
	r := results.Run{Kind: "queue", Scenario: "queue-sale", Impl: "asynq", Params: results.Params{Visibility: "30s"},
		Events: []faults.Event{
			{At: 5 * time.Millisecond, Fault: faults.EvictLease, Detail: did},
			{At: 900 * time.Millisecond, Began: 400 * time.Millisecond, Fault: faults.RedisRestart, Detail: "lock server killed & restarted"},
		},
		Queue: &oracle.QueueReport{Tasks: []oracle.TaskViolation{{Class: oracle.ClassLost, Task: "4",
			Takes: []oracle.Take{{ID: "4", Seq: 4, Begin: 4 * time.Millisecond, End: 5 * time.Millisecond, Result: oracle.TakeCrashed}}}}},
	}
	views := violationsOf([]results.Run{r})
	if len(views) != 1 || len(views[0].Timelines) != 1 {
		t.Fatalf("want one timeline, got %+v", views)
	}
	svg := string(views[0].Timelines[0].SVG)
	for _, want := range []string{
		"<title>evict-lease: the queue server evicted the lease keys asynq:{q}:lease while the worker holding order 4 works on it; that worker dies</title>",
		"<title>redis-restart: lock server killed &amp; restarted</title>",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("want %q in the timeline, got %s", want, svg)
		}
	}
}
