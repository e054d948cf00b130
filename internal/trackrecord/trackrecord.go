// Package trackrecord is stockbench's track record: real bugs from real libraries'
// trackers, each a named sale that reproduces it on the release that has it, and passes
// on a fixed release where one can be had on this machine.
//
// An entry is data: the issues, the library and its version, and the arguments of
// `stockbench run` (from the checkout's root) with what the sale must show. `stockbench
// repro NAME` runs it; the tests assert each.
package trackrecord

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Issue is an issue or a pull request on GitHub.
type Issue struct {
	Repo   string // owner/name
	Number int
	Pull   bool // a pull request: the fix, say
}

func (i Issue) String() string { return i.Repo + "#" + strconv.Itoa(i.Number) }

// URL is where the issue is read.
func (i Issue) URL() string {
	kind := "issues"
	if i.Pull {
		kind = "pull"
	}
	return fmt.Sprintf("https://github.com/%s/%s/%d", i.Repo, kind, i.Number)
}

// Entry is one bug of the record.
type Entry struct {
	// Name is what `stockbench repro` takes.
	Name   string
	Issues []Issue
	// Library names the library and the release the buggy sale runs.
	Library string
	// Shows says, in a sentence, what the sale shows.
	Shows string
	Buggy Case
	// Fixed is the same sale on a fixed release; nil when none can be had here, and
	// NoFix says why.
	Fixed *Case
	NoFix string
	// Slow: the sale takes minutes (it waits for a library's own timer).
	Slow bool
}

// Case is a sale of the record and what it must show.
type Case struct {
	// Version is the release the sale runs, and where it comes from.
	Version string
	// Build, when set, is the arguments of make, run in the checkout before the sale,
	// that build what it runs (a Go adapter at the release's version).
	Build []string
	// Args are the arguments of `stockbench run`, paths from the checkout's root.
	Args []string
	// Finding, when set, is the finding the buggy sale shows (a verdict finding's first
	// word, as DUPLICATED or OVERSOLD); the fixed sale must be SAFE.
	Finding string
	// Crash, when set, is what the buggy sale ends with instead: incomplete, its
	// reason holding this.
	Crash string
	// Tries is how many sales may be run until one shows the bug, for a bug that a race
	// decides (a crash inside a failover, say). Default: 1.
	Tries int
	// Redelivered, when set, is how many dead workers' tasks the buggy sale must see come
	// back: the control inside the sale, which tells a bug from a library that only
	// recovers slowly.
	Redelivered int
}

// Wants says what a case must show, for a line of output.
func (c Case) Wants() string {
	if c.Crash != "" {
		return fmt.Sprintf("the sale ends incomplete: %q", c.Crash)
	}
	return c.Finding
}

// entries is the record, in the order `stockbench repro` lists it.
var entries = []Entry{
	{
		Name:    "kombu-337",
		Issues:  []Issue{{Repo: "celery/kombu", Number: 337}, {Repo: "celery/celery", Number: 2599}},
		Library: "Celery 5.2.6 with kombu 5.2.4's Redis transport (Debian's python3-celery)",
		Shows: "a task whose countdown is further off than the transport's visibility_timeout is held unacknowledged by its " +
			"worker until due, restored meanwhile by the workers' restore (every 100 s), and run twice: DUPLICATED with no fault",
		Buggy: Case{
			Version: "Celery 5.2.6, kombu 5.2.4 (Debian)",
			Args: []string{"--queue-exec", "celery-eta=/usr/bin/python3 adapters/python/celery_queue.py --countdown-every 2 --countdown 5",
				"--adapter-procs", "4", "--workers", "4", "--buyers", "105", "--stock", "105", "--rate", "1", "--visibility", "1s"},
			Finding: "DUPLICATED",
		},
		NoFix: "none to have: kombu documents it as a caveat of the Redis transport (the visibility timeout must exceed the " +
			"longest ETA or countdown), and no release changes it",
		Slow: true,
	},
	{
		Name:    "phpredis-2323",
		Issues:  []Issue{{Repo: "phpredis/phpredis", Number: 2323}, {Repo: "phpredis/phpredis", Number: 2552, Pull: true}},
		Library: "phpredis 5.3.7's RedisCluster (Debian's php-redis)",
		Shows: "the clients mapped the cluster before its replicas joined (a replica added to a running cluster); the master " +
			"of the sale's slot is killed and its replica promoted while a PHP process holds the lock: the MOVED to the " +
			"promoted replica sends the client over the old master's list of replicas, which its map never made, and the " +
			"process crashes (segmentation fault); the sale ends incomplete",
		Buggy: Case{
			Version: "phpredis 5.3.7 (Debian)",
			// replica=late: the crash needs a client whose map lists no replica of the
			// failed master (cluster_update_slot walks prev_master->slaves, NULL then).
			// With the replicas in the map before the clients connect (the default),
			// phpredis remaps and the sale ends as the seed lock does: 0 of 5 crashed
			// here, 5 of 5 with replica=late. Before the cluster awaited its listing, a
			// sale crashed when its processes mapped the cluster before Redis listed the
			// replicas, a race (7 of 10 here, 0 of 8 in CI once processes started as
			// buyers came).
			Args:  []string{"--scenario", "fault-sale", "--lock-exec", "php adapters/php/seed-lock.php", "--fault", "cluster-kill:replica=late"},
			Crash: "segmentation fault",
		},
		NoFix: "fixed by phpredis/phpredis#2552 (merged August 2025: an exception where the walk met no list of replicas); " +
			"Debian ships 5.3.7 and no later build can be installed here",
	},
	{
		Name: "redsync-149",
		Issues: []Issue{{Repo: "go-redsync/redsync", Number: 149, Pull: true},
			{Repo: "go-redsync/redsync", Number: 147, Pull: true}},
		Library: "go-redsync/redsync v4.8.1's Redlock with Extend (Go module proxy)",
		Shows: "Redlock over five servers without persistence, restarted one after another while a holder keeps the " +
			"lock for seconds, extending it every third of its 8 s TTL, and seven others poll for it every 100 ms (a " +
			"leader's lock): Extend renews only where the key still is, so after the third restart the lease is on two " +
			"servers, and the three restarted ones grant the lock to each other buyer inside the first one's lease, while " +
			"its Until() still tells the first it holds it (asked before each write; about 4 s after the next got in): " +
			"its writes undo theirs, LOST 3 with LOCK-BROKEN 3",
		Buggy: Case{
			Version: "redsync v4.8.1 (Go module proxy)",
			Build:   []string{"go-adapters"},
			Args:    append([]string{"--lock-exec", "redsync-4.8.1=bin/adapters/redsync-lock --extend"}, leaderSale...),
			Finding: "LOCK-BROKEN",
			// The bug needs the third server back inside the lease the last Extend gave,
			// at least two thirds of the TTL. A container's restart took 1.2-1.3 s here
			// idle and 1.6-1.9 s with 4 busy loops on the 2 CPUs; with a 3 s TTL, the
			// long suite's load had the lease lapse first in 6 of 6 sales (OVERLAP, not
			// LOCK-BROKEN). An 8 s TTL leaves 5.3 s.
			Tries: 3,
		},
		Fixed: &Case{
			Version: "redsync v4.12.1 with WithSetNXOnExtend (Go module proxy)",
			Build:   []string{"go-adapters", "REDSYNC=v4.12.1"},
			Args: append([]string{"--lock-exec", "redsync-4.12.1=bin/adapters/redsync-lock-v4.12.1 --extend --setnx-on-extend"},
				leaderSale...),
		},
	},
	{
		Name:    "rq-2236",
		Issues:  []Issue{{Repo: "rq/rq", Number: 2236}},
		Library: "RQ 1.13's worker loop, Worker.work (Debian's python3-rq)",
		Shows: "a deploy's SIGTERM that lands after RQ's own loop took a job off the queue (LPOP) and before it marked it " +
			"started: the worker, idle by its state, stops at once (StopRequested), and the job is in no queue and no " +
			"registry, gone for good: LOST 1",
		Buggy: Case{
			Version: "RQ 1.13.0 (Debian)",
			Args: []string{"--queue-exec", "rq-loop=/usr/bin/python3 adapters/python/rq_queue.py --worker-loop",
				"--adapter-procs", "4", "--fault", "step-term:step=dequeued", "--buyers", "40", "--stock", "40"},
			Finding: "LOST",
		},
		NoFix: "none: the issue is open, and no release of RQ marks a job started in the same step that takes it",
	},
	{
		Name:    "asynq-1144",
		Issues:  []Issue{{Repo: "hibiken/asynq", Number: 1144}, {Repo: "hibiken/asynq", Number: 1158, Pull: true}},
		Library: "hibiken/asynq v0.26.0's recoverer (Go module proxy; the built-in asynq design)",
		Shows: "the queue's lease set is evicted while a worker holds a task, and that worker dies; three more die later, " +
			"their leases in place. A minute after, asynq's recoverer gives those three back, and never the first: it " +
			"looks for tasks only in the lease set, and the task stays active for good: LOST 1, recovery 3 of 4",
		Buggy: Case{
			Version: "asynq v0.26.0 (Go module proxy)",
			Args: []string{"--scenario", "queue-sale", "--queue", "asynq", "--fault", "evict-lease+worker-crash:nth=10",
				"--visibility", "45s", "--buyers", "40", "--stock", "40", "--workers", "4"},
			Finding:     "LOST",
			Redelivered: 3,
		},
		NoFix: "none released: hibiken/asynq#1158, which makes the recoverer give an active task without a lease one " +
			"that has run out, is open; v0.26.0 is the latest release",
		Slow: true,
	},
	{
		Name:    "sidekiq-6829",
		Issues:  []Issue{{Repo: "sidekiq/sidekiq", Number: 6829}},
		Library: "Sidekiq 6.4's BasicFetch (Debian's ruby-sidekiq)",
		Shows: "three workers killed with SIGKILL mid-job (an out-of-memory kill, a node lost): their jobs, taken off Redis " +
			"by BRPOP and held only in the process, are gone, not retried and not in the dead set: LOST, exactly those",
		Buggy: Case{
			Version: "Sidekiq 6.4.1 (Debian)",
			Args:    []string{"--queue-exec", "sidekiq=ruby adapters/ruby/bin/stockbench-sidekiq-queue", "--fault", "worker-crash"},
			Finding: "LOST",
		},
		NoFix: "none to have: BasicFetch is at most once by design, and reliable fetch (super_fetch) is Sidekiq Pro's",
	},
}

// leaderSale is a lock held for seconds by one holder while a few others poll for it,
// as a leader's or a long job's, on Redlock's five servers restarted in turn: the 5th
// holder works through the restarts, 4 s apart (half the TTL), renewing every 2.7 s.
// The others wait for it up to a minute, as a fixed release makes them.
var leaderSale = []string{"--scenario", "fault-sale", "--adapter-nodes", "5", "--fault", "rolling-restart",
	"--ttl", "8s", "--buyers", "8", "--stock", "8", "--retry-interval", "100ms", "--timeout", "60s"}

// All returns the record.
func All() []Entry { return slices.Clone(entries) }

// Lookup returns the entry named name.
func Lookup(name string) (Entry, error) {
	i := slices.IndexFunc(entries, func(e Entry) bool { return e.Name == name })
	if i < 0 {
		return Entry{}, fmt.Errorf("unknown bug %q (the record: %s)", name, strings.Join(Names(), ", "))
	}
	return entries[i], nil
}

// Names lists the entries' names.
func Names() []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	return names
}

// IssueList is e's issues, comma-separated.
func (e Entry) IssueList() string {
	parts := make([]string, len(e.Issues))
	for i, is := range e.Issues {
		parts[i] = is.String()
	}
	return strings.Join(parts, ", ")
}
