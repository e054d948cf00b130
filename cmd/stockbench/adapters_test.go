package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stockbench/stockbench/bench"
)

// needPHP skips, saying why, without PHP and phpredis; CI requires them.
func needPHP(t *testing.T) {
	t.Helper()
	if err := exec.Command("php", "-r", "exit(class_exists('Redis') ? 0 : 1);").Run(); err != nil {
		if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
			t.Fatalf("PHP with phpredis is missing: %v", err)
		}
		t.Skipf("PHP with phpredis is missing (%v); scripts/ensure-adapters.sh installs it", err)
	}
}

// TestLockExec: the seed article's lock, in PHP, runs from the command line like a
// built-in design, under a network fault too, its record judged by what its hello
// documents, its pool's serving model in the report, and leaves no process behind.
func TestLockExec(t *testing.T) {
	needPHP(t)
	seed, _ := filepath.Abs("../../adapters/php/seed-lock.php")
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "matrix", "--lock-exec", "php-seed=php "+seed, "--locks", "php-seed",
		"--faults", "none,client-pause,net-latency", "--queues", "", "--adapter-procs", "8", "--out", out)
	if code != bench.ExitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	// Its verdicts are internal/designs/adapter's to assert; here, that the command ran it.
	f := readRun(t, out, "summary.md")
	if len(f.Runs) != 3 || f.Runs[0].Impl != "php-seed" || !f.Complete || f.Runs[0].Errors > 0 || f.Runs[0].Oracle.Bought < 30 {
		t.Errorf("want php-seed's three sales complete, selling the stock, got %d runs: %+v", len(f.Runs), f.Runs)
	}
	for _, r := range f.Runs {
		if r.AsExpected == nil || r.Params.Pool != 8 || r.Params.Serve != 8 {
			t.Errorf("%s: want the record judged by the adapter's documented verdicts and its pool of 8 serving 8 buyers, got expected %v, pool %d, serve %d",
				r.Params.Faults, r.Expected, r.Params.Pool, r.Params.Serve)
		}
	}
	summaries, _ := filepath.Glob(filepath.Join(out, "*", "summary.md"))
	if summary, _ := os.ReadFile(summaries[0]); !strings.Contains(string(summary), "process adapters: a pool of 8 processes per instance serves as many buyers at once") {
		t.Errorf("want the serving model on the Load line:\n%s", summary)
	}
	if left := running(seed); len(left) > 0 {
		t.Errorf("adapter processes left behind: %v", left)
	}

	// A queue adapter, the only design named: run runs it.
	zset, _ := filepath.Abs("../../adapters/php/seed-queue.php")
	out = t.TempDir()
	code, stdout, stderr = stockbench(t, "run", "--queue-exec", "php "+zset, "--fault", "worker-crash", "--out", out)
	if code != bench.ExitOK {
		t.Fatalf("queue: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	f = readRun(t, out, "summary.md")
	if r := f.Runs[0]; r.Impl != "seed-queue" || !r.Complete || r.Queue == nil || r.Queue.Crashed == 0 {
		t.Errorf("queue: want seed-queue's sale with crashed workers, got %+v", r)
	}
	if left := running(zset); len(left) > 0 {
		t.Errorf("adapter processes left behind: %v", left)
	}
}

// TestLockExecBadInput: an adapter that cannot start, or does not speak the part it was
// named for, is one line and exit 2, and nothing is written.
func TestLockExecBadInput(t *testing.T) {
	needPHP(t)
	seed, _ := filepath.Abs("../../adapters/php/seed-lock.php")
	exits, _ := filepath.Abs("../../internal/designs/adapter/testdata/exits.sh")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--lock-exec", "/bin/sh " + exits}, `adapter exits: exited (exit status 3); stderr: PHP Fatal error: Class "Redis" not found`},
		{[]string{"run", "--lock-exec", "php " + seed + " --buy"}, `adapter seed-lock supports ["buy"], not lock; pass it with --buy-exec`},
		{[]string{"run", "--buy-exec", "php " + seed}, `adapter seed-lock supports ["lock" "half"], not buy; pass it with --lock-exec`},
		{[]string{"run", "--queue-exec", "php " + seed}, `adapter seed-lock supports ["lock" "half"], not queue; pass it with --lock-exec`},
		{[]string{"run", "--lock-exec", "token=php " + seed}, `"token" is a built-in design's name`},
		{[]string{"run", "--lock-exec", "php " + seed, "--adapter-procs", "-1"}, `invalid value "-1" for flag -adapter-procs`},
		{[]string{"run", "--lock-exec", "php " + seed, "--adapter-nodes", "10"}, `invalid value "10" for flag -adapter-nodes: at most 9`},
		{[]string{"run", "--lock-exec", "php " + seed, "--adapter-nodes", "5"}, `adapter seed-lock does not support nodes: --adapter-nodes 5`},
	} {
		out := filepath.Join(t.TempDir(), "runs")
		code, _, stderr := stockbench(t, append(tc.args, "--out", out)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != bench.ExitUsage || !strings.Contains(lines[len(lines)-1], tc.want) {
			t.Errorf("%v: want exit 2 and a last line with %q, got %d:\n%s", tc.args, tc.want, code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: bad input must not create %s", tc.args, out)
		}
	}
	if left := append(running(seed), running(exits)...); len(left) > 0 {
		t.Errorf("adapter processes left behind: %v", left)
	}
}

// running lists the processes whose command line holds marker.
func running(marker string) []string {
	out, _ := exec.Command("pgrep", "-af", marker).Output()
	var procs []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.Contains(l, "pgrep") {
			procs = append(procs, l)
		}
	}
	return procs
}

// TestMatrixGoesOnPastAnUnfinishedSale: a sale that cannot finish while the shared
// server still answers (here an adapter that dies mid-sale) is a "?" cell with its
// reason; the other sales run, the report is written, and the command exits 3 at the end
// (bench.ExitUnfinished).
func TestMatrixGoesOnPastAnUnfinishedSale(t *testing.T) {
	crashes, _ := filepath.Abs("../../internal/designs/adapter/testdata/crashes.sh")
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "matrix", "--lock-exec", "crashes=/bin/sh "+crashes, "--locks", "crashes,lua",
		"--faults", "none,crash-holder", "--queues", "", "--adapter-procs", "2", "--out", out)
	if code != bench.ExitUnfinished {
		t.Fatalf("want exit 3 at the end, got %d:\n%s\n%s", code, stdout, stderr)
	}
	f := readRun(t, out, "report.html")
	if len(f.Runs) != 4 || f.Complete {
		t.Fatalf("want all 4 sales recorded and the run incomplete, got %d runs, complete=%v", len(f.Runs), f.Complete)
	}
	for _, r := range f.Runs {
		if r.Complete == (r.Impl == "crashes") {
			t.Errorf("%s under %s: complete=%v (%s)", r.Impl, r.FaultPlan(), r.Complete, r.Error)
		}
	}
	if want := "2 of 4 sales did not finish: fault-sale with crashes under crash-holder failed: "; !strings.Contains(f.Incomplete, want) {
		t.Errorf("the run's reason %q does not start with %q", f.Incomplete, want)
	}
	row := ""
	for _, l := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(l, "crashes ") {
			row = l
		}
	}
	if strings.Count(row, "?") != 2 || !strings.Contains(stdout, "INCOMPLETE: 2 of 4 sales did not finish") {
		t.Errorf("want the unfinished sales as ? cells and the reason printed:\n%s", stdout)
	}
	if left := running(crashes); len(left) > 0 {
		t.Errorf("adapter processes left behind: %v", left)
	}
}

// TestAdapterWithoutItsLibrary: each shipped adapter run by an interpreter that lacks the
// library it drives is refused at its hello with one line saying what to install, exit 2,
// no traceback and no run directory. Each interpreter is made to miss it as a machine
// without the package would: Python without its site packages (-S), PHP without its ini
// files (-n, so no phpredis), Node and Ruby with a preload that hides the module.
func TestAdapterWithoutItsLibrary(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	abs := func(p string) string { a, _ := filepath.Abs(p); return a }
	tests := []struct {
		runtime, flag, command, design, want string
	}{
		{"/usr/bin/python3", "--lock-exec", "/usr/bin/python3 -S " + abs("../../adapters/python/redis_py_lock.py"), "--lock",
			"the Python module redis is not installed for /usr/bin/python3: apt-get install python3-redis"},
		{"/usr/bin/python3", "--queue-exec", "/usr/bin/python3 -S " + abs("../../adapters/python/celery_queue.py"), "--queue",
			"the Python module celery is not installed for /usr/bin/python3: apt-get install python3-celery"},
		{"php", "--lock-exec", "php -n " + abs("../../adapters/php/seed-lock.php"), "--lock", "phpredis is not loaded in "},
		{"node", "--lock-exec", "node -r " + abs("testdata/hide-redis.js") + " " + abs("../../adapters/node/set-nx-px-lock.js"), "--lock",
			"node-redis is not installed for "},
		{"ruby", "--queue-exec", "ruby -r" + abs("testdata/hide_sidekiq.rb") + " " + abs("../../adapters/ruby/bin/stockbench-sidekiq-queue"), "--queue",
			"the gem sidekiq is not installed for "},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(strings.Fields(tt.command)[2]), func(t *testing.T) {
			if _, err := exec.LookPath(tt.runtime); err != nil {
				if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
					t.Fatalf("%s is missing", tt.runtime)
				}
				t.Skipf("%s is missing; scripts/ensure-adapters.sh installs it", tt.runtime)
			}
			out := filepath.Join(t.TempDir(), "runs")
			code, stdout, stderr := stockbench(t, "run", tt.flag, "mine="+tt.command, tt.design, "mine", "--buyers", "4", "--stock", "2", "--out", out)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if code != bench.ExitUsage || !strings.HasPrefix(last, "stockbench: adapter mine: refused hello: ") || !strings.Contains(last, tt.want) ||
				strings.Contains(stderr, "Traceback") || strings.Contains(stderr, "Error:") || stdout != "" {
				t.Errorf("exit %d, want 2 and a last line with %q:\n%s%s", code, tt.want, stdout, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}
