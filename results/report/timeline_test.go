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

// TestDropTimelineNamesSchedulers: a scheduled drop's violation names scheduler
// instances, not buyers, and says which wave fired twice and who fired it when.
func TestDropTimelineNamesSchedulers(t *testing.T) {
	first := oracle.Hold{Buyer: 1, Sent: 990 * time.Millisecond, Enter: time.Second, Read: time.Second, Wrote: 1650 * time.Millisecond, Leave: 1650 * time.Millisecond, Lease: 1990 * time.Millisecond}
	second := oracle.Hold{Buyer: 2, Sent: 1018 * time.Millisecond, Enter: 1019 * time.Millisecond, Wrote: 1019 * time.Millisecond, Leave: 1020 * time.Millisecond, Lease: 2018 * time.Millisecond}
	fires := []oracle.Fire{{Wave: 4, Scheduler: 2, Units: 5, At: 1019 * time.Millisecond}, {Wave: 4, Scheduler: 1, Units: 5, At: 1650 * time.Millisecond}}
	r := results.Run{Kind: results.LockSale, Scenario: "drop-sale", Impl: "token", Params: results.Params{Waves: 8, Faults: "failover"},
		Oracle: oracle.CheckSchedule(3, 8, 8, 40, fires, []oracle.Hold{first, second}, nil)}
	views := violationsOf([]results.Run{r})
	if len(views) != 1 || len(views[0].Timelines) != 1 {
		t.Fatalf("want one timeline, got %+v", views)
	}
	v := views[0]
	if want := "wave 5 fired 2 times: by scheduler 2 at 1.019s, by scheduler 1 at 1.65s"; len(v.Notes) != 1 || v.Notes[0] != want {
		t.Errorf("notes %q, want %q", v.Notes, want)
	}
	if !strings.HasPrefix(v.Timelines[0].Title, "LOCK-BROKEN: scheduler 2 came in at") {
		t.Errorf("title %q", v.Timelines[0].Title)
	}
	if svg := string(v.Timelines[0].SVG); !strings.Contains(svg, ">scheduler 1<") || strings.Contains(svg, "buyer") {
		t.Errorf("want the rows named after the schedulers, got %s", svg)
	}
}
