//go:build long

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/stockbench/stockbench/bench"
	"github.com/stockbench/stockbench/bench/explore"
	"github.com/stockbench/stockbench/internal/servers/redistest"
	"github.com/stockbench/stockbench/internal/trackrecord"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
)

// TestSignalDuringReport: a signal while the report is written stops it; results.json,
// written before, is whole and complete.
func TestSignalDuringReport(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			s := launch(t, "matrix", "--locks", "lua,set-nx-ex", "--faults", "none,crash-holder,crash-acquire",
				"--queues", "list,stream", "--queue-faults", "none,worker-crash", "--redis", "process")
			s.until(t, "writing the report")
			s.cmd.Process.Signal(sig)
			s.wait(t, bench.ExitInterrupted)
			path := firstResults(t, s.out)
			f, err := results.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if !f.Complete {
				t.Errorf("every sale ran, yet results.json says: %s", f.Incomplete)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), "report.html")); err == nil {
				t.Error("report.html was written after all: the signal came too late to test anything")
			}
			if !strings.Contains(s.err.String(), "interrupted while writing the report") {
				t.Errorf("stderr does not say what happened:\n%s", s.err.String())
			}
			s.nothingLeft(t, f)
		})
	}
}

// TestDashboardLive runs a sale with --dashboard (set-nx-ex with its holder paused: it
// oversells as it goes) while headless Chromium watches the page and Debian's
// Prometheus scrapes /metrics with deploy/monitoring/prometheus.yml: the page's
// counters move mid-sale, PromQL answers the sold count and the p99 the record has, every
// query of deploy/monitoring/grafana-dashboard.json runs, and the page saved at the end
// opens with the network off and shows the verdict. Screenshots (PNG) go to bin/artefacts.
func TestDashboardLive(t *testing.T) {
	t.Parallel()
	exe, promExe := browser(t), prometheusBinary(t)
	out := t.TempDir()
	// 15 s of sale: time for a browser and Prometheus to start on a loaded machine.
	cmd := exec.Command(binary, "run", "--lock", "set-nx-ex", "--fault", "client-pause", "--buyers", "600", "--stock", "480",
		"--rate", "40", "--out", out, "--dashboard", ":0")
	var stdout strings.Builder
	cmd.Stdout = &stdout
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr, stderr := make(chan string, 1), make(chan string, 1)
	go func() {
		var all strings.Builder
		sc := bufio.NewScanner(errPipe)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if m := regexp.MustCompile(`dashboard at http://([^/]+)/`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		stderr <- all.String()
	}()
	var host string
	select {
	case host = <-addr:
	case <-time.After(60 * time.Second):
		t.Fatal("no dashboard address on stderr")
	}
	page := "http://" + host + "/"

	prom := startPrometheus(t, promExe, host)

	// The page, mid-sale: the sold counter moves between two looks a few seconds apart.
	ctx := browserContext(t, exe)
	if err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.CSS("#sold"))); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	// Read in one evaluation: the page redraws its counters every poll, and a node looked
	// up first and read after was once gone in between ("No node with given id found").
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, sel)))
		if err != nil {
			t.Fatalf("chromium: %s: %v", sel, err)
		}
		return s
	}
	first := text("#sold")
	time.Sleep(3 * time.Second)
	second, overlaps := text("#sold"), text("#overlaps")
	if first == second {
		t.Errorf("the sold counter did not move in 3 s: %s", first)
	}
	if n, _ := strconv.Atoi(overlaps); n == 0 {
		t.Errorf("a paused holder's lock taken by others: want overlaps seen, got %q", overlaps)
	}
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		keep(t, "dashboard-live.png", shot)
	}
	t.Logf("mid-sale: sold %s, then %s; overlaps seen %s", first, second, overlaps)

	// PromQL while the sale goes: a scrape has the sold count.
	if v := prom.wait(t, `max(max_over_time(stockbench_sold_total{design="set-nx-ex"}[5m]))`); v <= 0 {
		t.Errorf("sold mid-sale: %v", v)
	}

	if err := cmd.Wait(); err != nil && cmd.ProcessState.ExitCode() > 1 {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), <-stderr)
	}
	<-stderr

	// The record and the saved page.
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "dashboard.html"))
	if len(dirs) != 1 {
		t.Fatalf("want one dashboard.html, found %v", dirs)
	}
	saved := dirs[0]
	f, err := results.Read(filepath.Join(filepath.Dir(saved), "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	run := f.Runs[0]
	state := savedState(t, saved)

	// PromQL after the sale: the last scrape has the final figures, which are the page's,
	// and the p99 read off the buckets lies in the bucket of the record's p99.
	if v := prom.query(t, `max(max_over_time(stockbench_sold_total{design="set-nx-ex"}[5m]))`); v != float64(state.Sales[0].Sold) {
		t.Errorf("PromQL sold %v, the saved page %d", v, state.Sales[0].Sold)
	}
	// histogram_quantile ranks the p99 at 0.99 n, HdrHistogram at 0.99 n rounded: at a
	// bucket's edge the two may name neighbouring samples, one on each side of it.
	p99 := prom.query(t, `histogram_quantile(0.99, max by (le) (max_over_time(stockbench_latency_seconds_bucket{design="set-nx-ex"}[5m])))`)
	lo, hi := bucketOf(float64(run.Latency["purchase"].P99Us) / 1e6)
	_, next := bucketOf(hi * 1.0001)
	if p99 < lo || p99 > next {
		t.Errorf("PromQL p99 %.4fs, the record's %dus: want it in (%g, %g], or the bucket above", p99, run.Latency["purchase"].P99Us, lo, hi)
	}
	if v := prom.query(t, `max(max_over_time(stockbench_verdict{design="set-nx-ex",class="OVERSOLD"}[5m]))`); v != 1 {
		t.Errorf("PromQL verdict OVERSOLD: %v (the record: %s)", v, run.Verdict.Cell())
	}
	t.Logf("PromQL: sold %d, p99 %.3fs (record %dus), verdict %s", state.Sales[0].Sold, p99, run.Latency["purchase"].P99Us, run.Verdict.Cell())
	for _, expr := range grafanaExprs(t) {
		prom.run(t, expr)
	}

	// The saved page fetches nothing (it opens offline) and shows the run's verdict.
	octx := browserContext(t, exe)
	if err := chromedp.Do(octx, chromedp.Navigate("file://"+saved), chromedp.WaitVisible(chromedp.CSS("#matrix td.cell"))); err != nil {
		t.Fatalf("chromium: the saved page: %v", err)
	}
	cell, err := chromedp.Run(octx, chromedp.Text(chromedp.CSS("#matrix td.cell")))
	if err != nil {
		t.Fatal(err)
	}
	if cell != run.Verdict.Cell() {
		t.Errorf("the saved page's cell %q, the record's %q", cell, run.Verdict.Cell())
	}
	if n, err := chromedp.Run(octx, chromedp.Evaluate[int](`performance.getEntriesByType("resource").length`)); err != nil || n != 0 {
		t.Errorf("the saved page fetched %d resources (%v)", n, err)
	}
	if shot, err := chromedp.Run(octx, chromedp.FullScreenshot(100)); err == nil {
		keep(t, "dashboard-saved.png", shot)
	}
}

// TestDistributed runs make bench-distributed's script at a small size: four shard
// containers of the stockbench image per design on a private network against a Redis
// container, merged, beside the one-process run. The merged verdicts are the one-process
// ones (lua SAFE, seed-setnx OVERSOLD), the witness sees seed-setnx's holders on
// different shards overlap, and no container or network is left.
func TestDistributed(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no Docker engine: the shards are containers")
	}
	sharesTheEngine(t)
	out := t.TempDir()
	cmd := exec.Command("../../scripts/bench-distributed.sh")
	cmd.Env = append(os.Environ(), "SHARDS=4", "BUYERS=400", "STOCK=40", "LOCKS=lua,seed-setnx", "FLAGS=--think 1ms", "OUT="+out)
	b, err := cmd.CombinedOutput()
	t.Logf("%s", b)
	if err != nil {
		t.Fatalf("bench-distributed: %v", err)
	}
	for lock, want := range map[string]oracle.Class{"lua": oracle.ClassSafe, "seed-setnx": oracle.ClassOversold} {
		matches, _ := filepath.Glob(filepath.Join(out, "merged", "*-"+lock+"-merged", "results.json"))
		if len(matches) != 1 {
			t.Fatalf("%s: want one merged run, got %v", lock, matches)
		}
		f, err := results.Read(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		run := f.Runs[0]
		if run.Verdict.Class != want || run.Shard == nil || run.Shard.Count != 4 || run.Oracle.Buyers != 400 {
			t.Errorf("%s merged: %s over %d buyers (%+v), want %s over 400 from 4 shards", lock, run.Verdict, run.Oracle.Buyers, run.Shard, want)
		}
		if w := run.Oracle.Witness; lock == "seed-setnx" && (w == nil || w.Max < 2 || run.Oracle.Overlaps == 0) {
			t.Errorf("seed-setnx: the witness missed the overlaps across shards: %+v", w)
		}
	}
	left, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "name=stockbench-dist-").Output()
	if s := strings.TrimSpace(string(left)); s != "" {
		t.Errorf("networks left behind: %s", s)
	}
}

// TestExplore runs the explorer on a real Redis: none (no lock) against lua (one script)
// over timings and loads alone, nobody naming a work time or a contention. Whatever the
// draws, lua cannot oversell; none oversells whenever two buyers read the stock before
// either writes, which every drawn sale with a unit per buyer or fewer gives it, so the
// shrink (which keeps a sale only when each of its tries oversells) leaves a sale that
// oversold on every try, and ten reruns of it against lua's ten are significant unless
// none's rate fell under 7 in 10. The run admits no other outcome.
func TestExplore(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	xml := filepath.Join(t.TempDir(), "explore.xml")
	profile := filepath.Join(t.TempDir(), "cpu.prof")
	// 40 s of budget, 20 s of grace for the sales under way, and the report: a command
	// still going after five minutes hangs.
	code, stdout, stderr := stockbenchWithin(t, 5*time.Minute, "explore", "--lock", "none", "--lock", "lua", "--faults", "none", "--budget", "40s", "--out", out, "--junit", xml,
		"--cpuprofile", profile)
	if fi, err := os.Stat(profile); err != nil || fi.Size() == 0 {
		t.Errorf("--cpuprofile wrote no profile: %v", err)
	}
	if code != bench.ExitFailed || !strings.Contains(stdout, "DIFFERENCE none is worse than lua here: OVERSOLD") {
		t.Fatalf("exit %d, want 1 with none worse than lua:\n%s\n%s", code, stdout, stderr)
	}
	// The JUnit file: the findings' reruns held to finishing (the designs are compared),
	// and the exploration's own case failed by the difference.
	lines := readJUnit(t, xml)
	if last := lines[len(lines)-2]; !strings.HasPrefix(last, "explore\tnone vs lua\tfailure\tnone is worse than lua here: OVERSOLD") {
		t.Errorf("want the exploration's case failed by the difference, got:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines[:len(lines)-2] {
		if !strings.Contains(l, "\tpassed\t") || !strings.Contains(l, "rerun: stockbench run ") {
			t.Errorf("a finding's rerun: want passed with its rerun command, got %s", l)
		}
	}
	if !strings.Contains(stderr, "explore: searching") || !strings.Contains(stdout, "smallest: stockbench run --scenario fault-sale --lock none") {
		t.Errorf("no progress line, or no smallest command:\n%s\n%s", stdout, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "explore.json"))
	if len(dirs) != 1 {
		t.Fatalf("want one explore.json, got %v", dirs)
	}
	dir := filepath.Dir(dirs[0])
	b, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep explore.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		for _, r := range f.Rates {
			if r.Design == "lua" && (r.Shown["OVERSOLD"] > 0 || r.Shown["LOST-UPDATE"] > 0) {
				t.Errorf("lua oversold or lost an update under %s, %s: %v", f.Faults, f.Timing, r.Shown)
			}
		}
		if s := f.Seen["OVERSOLD"]; len(s) == 2 && s[1] > 0 {
			t.Errorf("lua seen overselling in the search under %s, %s", f.Faults, f.Timing)
		}
	}
	for _, name := range []string{"explore.md", "report.html", "results.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("explore wrote no %s: %v", name, err)
		}
	}
	f := readRun(t, out, "")
	if len(f.Runs) == 0 || f.Runs[0].Sale == nil || f.Runs[0].Sale.Design != "none" {
		t.Errorf("results.json: want the findings' example runs with their sales, got %d runs", len(f.Runs))
	}
	// The report opens on the answer: none worse than lua, its smallest sale, and the
	// region's cells telling them apart, all on the first screen (1280x800).
	if x := f.Exploration; x == nil || !strings.HasPrefix(x.Answer, "none is worse than lua: OVERSOLD ") || len(x.Regions) == 0 ||
		!strings.HasPrefix(x.Regions[0].Differs, "none worse by OVERSOLD") || x.Regions[0].Kind != "OVERSOLD" || !strings.HasPrefix(x.Regions[0].Rates[1], "0/") {
		t.Errorf("results.json: want the conclusion, none worse than lua by OVERSOLD, got %+v", x)
	}
	page := filepath.Join(dir, "report.html")
	problems, _ := checkInBrowser(t, browser(t), page)
	for _, p := range problems {
		t.Error("the exploration's report:", p)
	}
}

// TestLockGo builds the Go adapters as a go install'ed stockbench does, outside any
// checkout, into the user's cache: each library at a release it names, with the
// features that release has (redsync v4.11.0 has no WithSetNXOnExtend), and a working
// tree of a module (a maintainer's branch); a sale's rerun names --lock-go, not the
// build. A version the proxy does not serve is one line and exit 2, nothing written.
func TestLockGo(t *testing.T) {
	t.Parallel()
	away, cache := t.TempDir(), t.TempDir()
	run := func(args ...string) (int, string, string) {
		cmd := exec.Command(binary, args...)
		cmd.Dir, cmd.Env = away, append(os.Environ(), "XDG_CACHE_HOME="+cache)
		return runCmd(t, cmd)
	}
	tree := filepath.Join(away, "redsync-branch")
	dl, err := exec.Command("go", "mod", "download", "-json", "github.com/go-redsync/redsync/v4@v4.12.1").Output()
	var mod struct{ Dir string }
	if err != nil || json.Unmarshal(dl, &mod) != nil {
		t.Fatalf("go mod download: %v", err)
	}
	if err := os.CopyFS(tree, os.DirFS(mod.Dir)); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	names := []string{"redsync-lock-v4.11.0", "redislock-lock-v0.9.4", "rueidislock-lock-v1.0.79", "redsync-lock-redsync-branch"}
	code, stdout, stderr := run("matrix", "--locks", strings.Join(names, ","), "--queues", "", "--scenarios", "flash-sale", "--buyers", "4", "--stock", "4", "--out", out,
		"--lock-go", "github.com/go-redsync/redsync/v4@v4.11.0 --extend",
		"--lock-go", "github.com/bsm/redislock@v0.9.4 --refresh",
		"--lock-go", "github.com/redis/rueidis@v1.0.79",
		"--lock-go", "github.com/go-redsync/redsync/v4=./redsync-branch --extend --setnx-on-extend")
	for _, name := range names {
		if !regexp.MustCompile(name + ` +SAFE`).MatchString(stdout) {
			t.Errorf("%s: want SAFE", name)
		}
	}
	if code != bench.ExitOK || t.Failed() {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if built, _ := filepath.Glob(filepath.Join(cache, "stockbench", "go-adapters", "*")); len(built) != 4 {
		t.Errorf("want the four adapters built into the cache, got %q", built)
	}
	for _, r := range readRun(t, out, "summary.md").Runs {
		if line := strings.Join(r.Rerun, " "); !strings.Contains(line, "--lock-go "+r.Sale.Design+"=github.com/") || strings.Contains(line, "go-adapters") {
			t.Errorf("%s: want a rerun naming --lock-go, got %s", r.Key(), line)
		}
	}
	code, _, stderr = run("run", "--lock-go", "github.com/go-redsync/redsync/v4@v4.11.0 --extend --setnx-on-extend", "--adapter-nodes", "5", "--out", t.TempDir())
	if code != bench.ExitUsage || !strings.Contains(stderr, "has no WithSetNXOnExtend") {
		t.Errorf("v4.11.0 with --setnx-on-extend: exit %d, %s", code, stderr)
	}
	out = t.TempDir()
	code, _, stderr = run("run", "--lock-go", "github.com/bsm/redislock@v0.99.0", "--out", out)
	entries, _ := os.ReadDir(out)
	if code != bench.ExitUsage || !strings.Contains(stderr, "go get github.com/bsm/redislock@v0.99.0") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || len(entries) > 0 {
		t.Errorf("a version the proxy does not serve: exit %d, %s", code, stderr)
	}
}

// TestCheckExplores: a run file's explore block explores its design after its sales,
// and its thresholds judge each finding's reruns, a rate threshold reading them as it
// reads --runs. none oversells 60 buyers on 20 units (as TestExitStatus says), and in
// the exploration every drawn sale where two buyers read one unit before either writes.
func TestCheckExplores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rf := writeFile(t, dir, "stockbench.json", `{"locks": ["none"], "scenarios": ["flash-sale"], "faults": ["none"], "queues": [],
		"settings": {"buyers": 60, "stock": 20, "think": "2ms"},
		"thresholds": {"none": ["oversold_rate <= 0"]},
		"explore": {"budget": "30s", "faults": ["none"], "confirm": 3}}`)
	code, stdout, stderr := stockbench(t, "check", rf, "--out", t.TempDir())
	_, explored, _ := strings.Cut(stdout, "check: exploring none for 30s")
	if code != bench.ExitFailed || !strings.Contains(explored, "BROKEN: ") || !strings.Contains(explored, "oversold_rate <= 0") {
		t.Fatalf("exit %d, want 1 with the exploration's reruns over the threshold:\n%s\n%s", code, stdout, stderr)
	}
	bad := writeFile(t, dir, "bad.json", `{"locks": ["none"], "thresholds": {"none": ["oversold == 0"]}, "explore": {"budget": "soon"}}`)
	if code, _, stderr := stockbench(t, "check", bad, "--out", t.TempDir()); code != bench.ExitUsage || !strings.Contains(stderr, "explore: budget") {
		t.Errorf("a bad budget: exit %d, %s", code, stderr)
	}
}

// TestExploreInterrupted: Ctrl-C keeps what the exploration found: its directory is
// written, marked incomplete, it exits 130 saying so, and no Redis is left behind.
func TestExploreInterrupted(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	cmd := exec.Command(binary, "explore", "--lock", "none", "--lock", "lua", "--faults", "none", "--budget", "2m", "--redis", "process", "--out", out)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(15 * time.Second) // some batches in
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != bench.ExitInterrupted || !strings.HasPrefix(lastLine([]byte(stdout.String())), "exit 130: interrupted") {
		t.Fatalf("exit %d, want 130 with its line:\n%s\n%s", code, stdout.String(), stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(out, "*", "explore.md"))
	if len(files) != 1 {
		t.Fatalf("want one explore.md, got %v", files)
	}
	md, _ := os.ReadFile(files[0])
	if !strings.Contains(string(md), "INCOMPLETE (interrupted)") {
		t.Errorf("explore.md does not say it is incomplete:\n%s", md)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(files[0]), "explore.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep explore.Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Complete || rep.Redis.PID == 0 {
		t.Fatalf("explore.json: %v, complete %v, redis %+v", err, rep.Complete, rep.Redis)
	}
	leftBehind(t, &results.File{Target: rep.Redis})
}

// TestPerfCommand runs make perf's command small: both rates, their ratio, each shipped
// lock adapter beside its Go counterpart, and the peak RSS of a waiting run, all printed.
func TestPerfCommand(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	if _, err := exec.LookPath("redis-benchmark"); err != nil {
		t.Skip("redis-benchmark is not on PATH (Debian's redis-tools)")
	}
	profile := filepath.Join(t.TempDir(), "cpu.prof")
	code, stdout, stderr := stockbench(t, "perf", "--sales", "3000", "--rounds", "1", "--rss-buyers", "2000", "--purchase-buyers", "200",
		"--procs", "1", "--cpuprofile", profile)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	wants := []string{"lua scenario:", "buyers on 1 of", "redis-benchmark:", "ratio:", "peak RSS:",
		"purchase none", "purchase lua", "purchase token", "EVALSHA ×1", "to redis-benchmark's", "to theirs at its pace"}
	if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" { // else an adapter without its runtime says it was skipped
		wants = append(wants, "adapter redis-py", "beside token", "adapter seed-lock", "beside seed-setnx", "like for like")
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("perf printed no %q:\n%s", want, stdout)
		}
	}
	if fi, err := os.Stat(profile); err != nil || fi.Size() == 0 {
		t.Errorf("--cpuprofile wrote no profile: %v", err)
	}
	if code, _, stderr := stockbench(t, "perf", "--rounds", "0"); code != 2 || !strings.Contains(stderr, "must be positive") {
		t.Errorf("--rounds 0: want exit 2 and one line, got %d: %s", code, stderr)
	}
}

// TestInfraMatrix runs the real-infrastructure matrix at a small size, as make
// bench-infra does: a Sentinel group and a Redis Cluster of containers, and restarts that
// keep data. A slot migrated under the sale keeps the lock and its TTL. The token lock
// loses updates in a split brain, where buyers still write to the master cut
// off from its peers; token-wait, whose locks need a replica's acknowledgement, never
// oversells there. A restart from an AOF gives the lock back (within its 5s TTL), one
// from a snapshot taken before the lock does not, unless that snapshot caught an earlier
// holder's lock; a restart slower than the lease outlives it, but breaks no lock inside
// it. Nothing is left behind.
func TestInfraMatrix(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	needDocker(t)
	sharesTheEngine(t)
	out := t.TempDir()
	cmd := exec.Command(binary, "matrix", "--infra", "--redis", "container", "--ttl", "5s", "--locks", "token,token-wait",
		"--queues", "stream", "--fulfils", "idempotent", "--queue-faults", "redis-restart:persist=rdb,redis-restart:persist=aof-always",
		"--parallel", "2", "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v:\n%s", err, stderr.String())
	}
	f := readRun(t, out, "summary.md")
	got := map[string]oracle.Class{}
	for _, r := range f.Runs {
		cell := fmt.Sprintf("%s/%s", r.Impl, r.Params.Faults)
		got[cell] = r.Verdict.Class
		t.Logf("%s under %s: %s %v", r.Impl, r.Params.Faults, r.Verdict.Cell(), r.Events)
		// The AOF gives the lock back with its absolute expiry: a restart slower than
		// what the victim's lease had left (4.6 s of a 5 s TTL on a machine compiling
		// beside it) lets the next holder in after that lease, an outlived lease, never
		// a lock broken inside it as an empty restart's is.
		if cell == "token/redis-restart:persist=aof-always" && r.Oracle.LockBroken > 0 {
			t.Errorf("%s: the lock broken inside its lease (%s): the AOF did not give it back", cell, r.Verdict)
		}
	}
	for _, tt := range []struct {
		cell string
		want []oracle.Class
	}{
		{"token/sentinel-partition", []oracle.Class{oracle.ClassOversold, oracle.ClassLost}},
		{"token-wait/sentinel-partition", []oracle.Class{oracle.ClassSafe, oracle.ClassStuck}},
		{"token/cluster-migrate", []oracle.Class{oracle.ClassSafe}},
		// The snapshot (save 1 1) may have caught an earlier holder's lock: restored
		// with its absolute 5 s expiry, it keeps everyone out past the victim's hold.
		{"token/redis-restart:persist=rdb", []oracle.Class{oracle.ClassOversold, oracle.ClassLost, oracle.ClassSafe}},
		{"token/redis-restart:persist=aof-always", []oracle.Class{oracle.ClassSafe, oracle.ClassOversold, oracle.ClassLost, oracle.ClassOverlap}},
		{"stream/redis-restart:persist=rdb", []oracle.Class{oracle.ClassLost}},
		{"stream/redis-restart:persist=aof-always", []oracle.Class{oracle.ClassSafe}},
	} {
		c, ok := got[tt.cell]
		if !ok {
			t.Errorf("%s: not run (runs: %v)", tt.cell, got)
			continue
		}
		if !slices.Contains(tt.want, c) {
			t.Errorf("%s: want one of %v, got %s", tt.cell, tt.want, c)
		}
	}
	for _, r := range f.Runs {
		if r.Params.Faults == "cluster-migrate" && (r.Commands == nil || r.Commands.Total == 0) {
			t.Errorf("%s under cluster-migrate: want the commands summed over the masters, got %+v", r.Impl, r.Commands)
		}
	}
	nothingLeft(t, cmd.Process.Pid, nil)
}

// TestReportInBrowser builds a report from a real run (a small matrix: two locks, a lock
// fault, a queue and a queue fault) and opens it in headless Chromium at 1280x800: no
// console error or exception, every plot decoded, the verdict matrix coloured, the first
// screen holding the verdicts; then make bench's report, from the baseline's record. The
// screenshots are kept in bin/artefacts (report.jpg, the whole page; *-first-screen.png).
func TestReportInBrowser(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	exe := browser(t)
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "matrix", "--locks", "lua,set-nx-ex", "--faults", "none,slow-work",
		"--queues", "list", "--queue-faults", "none,worker-crash", "--fulfils", "naive", "--out", out)
	if code != 0 {
		t.Fatalf("matrix exit %d\n%s\n%s", code, stdout, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "report.html"))
	if len(dirs) != 1 {
		t.Fatalf("want one report.html, found %v", dirs)
	}
	problems, shot := checkInBrowser(t, exe, dirs[0])
	for _, p := range problems {
		t.Error(p)
	}
	// The run's guarantee sheet, in the report and from the command: list loses exactly
	// the tasks its dead workers held, and never does one twice.
	if page, _ := os.ReadFile(dirs[0]); !strings.Contains(string(page), `id="guarantees"`) {
		t.Error("the report has no delivery guarantees")
	}
	code, sheet, stderr := stockbench(t, "guarantees", filepath.Dir(dirs[0]))
	if want := "| list | once | at most once; 0 of 3 back |"; code != 0 || !strings.Contains(sheet, want) {
		t.Errorf("guarantees: exit %d, want the row %q:\n%s%s", code, want, sheet, stderr)
	}
	// The same runs as a matrix of many faults with long names, wider than the window.
	wide := widen(t, filepath.Dir(dirs[0]))
	code, stdout, stderr = stockbench(t, "report", wide)
	if code != 0 {
		t.Fatalf("report exit %d\n%s\n%s", code, stdout, stderr)
	}
	wproblems, _ := checkInBrowser(t, exe, filepath.Join(wide, "report.html"))
	for _, p := range wproblems {
		t.Error("wide matrix:", p)
	}
	art := filepath.Join("..", "..", "bin", "artefacts")
	if err := os.MkdirAll(art, 0o755); err == nil {
		os.WriteFile(filepath.Join(art, "report.jpg"), shot, 0o644)
	}
	// make bench's own report, rebuilt from the committed baseline (every design of the
	// default matrix, the queues and the headline): its first screen still holds the
	// verdicts.
	bench := t.TempDir()
	if code, stdout, stderr := stockbench(t, "report", filepath.Join("..", "..", "baseline", "results.json"), "--out", bench); code != 0 {
		t.Fatalf("report of the baseline: exit %d\n%s\n%s", code, stdout, stderr)
	}
	page := filepath.Join(bench, "make-bench.html")
	if err := os.Rename(filepath.Join(bench, "report.html"), page); err != nil {
		t.Fatal(err)
	}
	bproblems, _ := checkInBrowser(t, exe, page)
	for _, p := range bproblems {
		t.Error("make bench's report:", p)
	}
}

// TestBrowserCheckFails: the check finds a console error and a plot that does not
// decode, so a broken report cannot pass it.
func TestBrowserCheckFails(t *testing.T) {
	exe := browser(t)
	page := filepath.Join(t.TempDir(), "broken.html")
	os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><table class="matrix"><tr><td class="v-SAFE">SAFE</td></tr></table>
<img src="data:image/png;base64,iVBORw0KGgo="><script>console.error("boom")</script></body></html>`), 0o644)
	problems, _ := checkInBrowser(t, exe, page)
	got := strings.Join(problems, "\n")
	for _, want := range []string{"boom", "0 of 1 images decoded"} {
		if !strings.Contains(got, want) {
			t.Errorf("want a problem naming %q, got:\n%s", want, got)
		}
	}
}

// TestTrackRecord: every bug of the record that no race decides reproduces, one command
// from the checkout, on the release that has it (Debian's), and each fixed release the
// record names passes. kombu-337 waits for the workers' restore at 100 s.
func TestTrackRecord(t *testing.T) {
	needRecordRuntimes(t)
	t.Parallel() // minutes of waiting on kombu's timer, little CPU
	_, steady := recordByRace()
	checkRecord(t, steady)
}

// TestTrackRecordRaces: the record's bugs that a race decides (a case with Tries)
// reproduce within their tries, and their fixed releases pass. Not parallel: the
// package's parallel tests start only once it ends, so these sales have the machine to
// themselves (the long suite runs one package at a time), as their rates were measured.
func TestTrackRecordRaces(t *testing.T) {
	needRecordRuntimes(t)
	raced, _ := recordByRace()
	if len(raced) == 0 {
		t.Fatal("want the record's race-decided bugs, got none: is Tries still set?")
	}
	checkRecord(t, raced)
}

// TestPHPRedisClusterControl is phpredis-2323's control: the same sale with the
// replicas in the map the clients build as they connect (cluster-kill's default). The
// client walks the old master's replicas, finds the promoted one, remaps, and its
// process lives: the sale ends complete (the seed lock still oversells or sticks). Two
// sales: the crash needs a map without the replica, which the cluster no longer gives
// (0 of 5 crashed here, where 5 of 5 crashed with replica=late).
func TestPHPRedisClusterControl(t *testing.T) {
	needRecordRuntimes(t)
	t.Parallel()
	adapter, _ := filepath.Abs("../../adapters/php/seed-lock.php")
	for i := range 2 {
		code, stdout, stderr := stockbench(t, "run", "--scenario", "fault-sale", "--redis", "container",
			"--lock-exec", "php "+adapter, "--fault", "cluster-kill", "--out", t.TempDir())
		if strings.Contains(stdout+stderr, "segmentation fault") || code == 3 || code == 2 {
			t.Errorf("sale %d: want the sale complete (phpredis remaps when its map lists the replica), exit %d:\n%s%s", i+1, code, stdout, stderr)
		}
	}
}

// recordByRace splits the record's names: the bugs a race decides, and the others.
func recordByRace() (raced, steady []string) {
	for _, e := range trackrecord.All() {
		if e.Buggy.Tries > 1 {
			raced = append(raced, e.Name)
		} else {
			steady = append(steady, e.Name)
		}
	}
	return raced, steady
}

// needRecordRuntimes skips (fails, where the adapters are required) when the record's
// libraries are not installed.
func needRecordRuntimes(t *testing.T) {
	t.Helper()
	needPHP(t)
	for what, argv := range map[string][]string{
		"Debian's Python with Celery": {"/usr/bin/python3", "-c", "import celery"},
		"Ruby with Debian's Sidekiq":  {"ruby", "-e", `require "sidekiq"; require "redis-namespace"`},
	} {
		if err := exec.Command(argv[0], argv[1:]...).Run(); err != nil {
			if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
				t.Fatalf("%s is missing: %v", what, err)
			}
			t.Skipf("%s is missing (%v); scripts/ensure-adapters.sh installs it", what, err)
		}
	}
}

// checkRecord runs `stockbench repro NAMES` and asserts each bug reproduced, each fixed
// release passed, in stdout and in the JUnit file, and the record written as one matrix.
func checkRecord(t *testing.T, names []string) {
	t.Helper()
	out := t.TempDir()
	xml := filepath.Join(t.TempDir(), "repro.xml")
	code, stdout, stderr := stockbench(t, append(append([]string{"repro"}, names...), "--out", out, "--junit", xml)...)
	junitCases := readJUnit(t, xml)
	cases := 0
	for _, name := range names {
		e, err := trackrecord.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		cases++
		if !slices.ContainsFunc(junitCases, func(l string) bool { return strings.HasPrefix(l, "repro."+e.Name+"\t"+e.Buggy.Version+"\tpassed\t") }) {
			t.Errorf("%s on %s: want its JUnit case passed, got:\n%s", e.Name, e.Buggy.Version, strings.Join(junitCases, "\n"))
		}
		if want := e.Name + " on " + e.Buggy.Version + ": reproduced"; !strings.Contains(stdout, want) {
			t.Errorf("want %q, got:\n%s", want, stdout)
		}
		if e.Fixed != nil {
			cases++
			if !strings.Contains(stdout, e.Name+" on "+e.Fixed.Version+": passes") {
				t.Errorf("%s: want the fixed release to pass, got:\n%s", e.Name, stdout)
			}
		}
	}
	if code != bench.ExitOK {
		t.Errorf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	// The record as one matrix: a row per sale that left one, a check per sale.
	_, dir, found := strings.Cut(stdout, "the record as one matrix, a row per sale: ")
	dir, _, _ = strings.Cut(dir, "\n")
	f, err := results.Read(filepath.Join(strings.TrimSpace(dir), "results.json"))
	if !found || err != nil {
		t.Fatalf("want the record's matrix written, got %v:\n%s", err, stdout)
	}
	if len(f.Checks) != cases || len(results.Broken(f.Checks)) > 0 || len(f.Runs) < cases-1 {
		t.Errorf("want %d checks held and a row per sale (a crash leaves none), got %d runs, checks %+v", cases, len(f.Runs), f.Checks)
	}
}

// engine keeps TestSwarm, which joins the Docker engine to a swarm and leaves it again
// (its ingress and docker_gwbridge networks made and removed), apart from the tests whose
// sales run on Docker networks of their own: beside it, bench-distributed's shards once
// could not resolve their Redis container's name (no such host) on their own network.
var engine sync.RWMutex

// sharesTheEngine holds t's Docker networks apart from TestSwarm's engine changes.
func sharesTheEngine(t *testing.T) {
	engine.RLock()
	t.Cleanup(engine.RUnlock)
}

// TestSwarm runs make bench-swarm's script at a small size on a real orchestrator, a
// single-node Docker Swarm: four shard tasks of a replicated job per design against a
// Redis service on an overlay network, merged by a second job, beside the one-process
// run (lua SAFE, seed-setnx OVERSOLD, as in one process; a stream queue sale whose
// shards enqueue their share of the orders and run their share of the workers, SAFE). Then the lost shard: shard 2's
// container killed mid-sale, the merge incomplete with shard 2 lost and UNKNOWN, and the
// sale run again under the same run id merged complete. Nothing it made is left, the
// swarm included, and an engine already in a swarm stays in it.
func TestSwarm(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	if exec.Command("docker", "info").Run() != nil {
		t.Skip("no Docker engine: the shards are swarm tasks")
	}
	engine.Lock()
	t.Cleanup(engine.Unlock)
	before := swarmState(t)
	out := t.TempDir()
	run := func(env ...string) string {
		cmd := exec.Command("../../scripts/bench-swarm.sh")
		cmd.Env = append(os.Environ(), append([]string{"SHARDS=4", "OUT=" + out}, env...)...)
		b, err := cmd.CombinedOutput()
		t.Logf("%s", b)
		if err != nil {
			t.Fatalf("bench-swarm %v: %v", env, err)
		}
		return string(b)
	}
	merged := func(glob string) results.Run {
		t.Helper()
		matches, _ := filepath.Glob(filepath.Join(out, "merged", glob, "*-merged", "results.json"))
		if len(matches) != 1 {
			t.Fatalf("want one merged run in %s, got %v", glob, matches)
		}
		f, err := results.Read(matches[0])
		if err != nil {
			t.Fatal(err)
		}
		return f.Runs[0]
	}

	run("RUN_ID=sale", "BUYERS=400", "STOCK=40", "LOCKS=lua,seed-setnx", "QUEUES=stream")
	for design, want := range map[string]oracle.Class{"lua": oracle.ClassSafe, "seed-setnx": oracle.ClassOversold, "stream": oracle.ClassSafe} {
		r := merged("sb-*-" + design + "-sale")
		if r.Verdict.Class != want || r.Shard == nil || r.Shard.Count != 4 || r.Oracle.Buyers != 400 || !r.Complete {
			t.Errorf("%s merged: %s over %d buyers (%+v, complete %v), want %s over 400 from 4 shards", design, r.Verdict, r.Oracle.Buyers, r.Shard, r.Complete, want)
		}
		if design == "stream" && (r.Queue == nil || r.Queue.Accepted != 400 || r.Queue.Fulfilled != 40 || r.Queue.Refused != 360) {
			t.Errorf("stream merged: %+v; want all 400 orders accepted, 40 fulfilled and 360 refused across the shards", r.Queue)
		}
	}

	says := run("RUN_ID=lost", "BUYERS=2000", "STOCK=1500", "RATE=200", "LOCKS=lua", "QUEUES=", "KILL_SHARD=2")
	lost := merged("sb-*-lua-lost")
	if lost.Complete || lost.Shard == nil || !slices.Equal(lost.Shard.Lost, []int{2}) || lost.Verdict.Class != oracle.ClassUnknown || lost.Oracle.Pending != 500 {
		t.Errorf("lost shard: complete %v, %+v, %s, %d pending; want incomplete, shard 2 lost, UNKNOWN, 500 pending", lost.Complete, lost.Shard, lost.Verdict, lost.Oracle.Pending)
	}
	if rerun := merged("sb-*-lua-rerun"); !rerun.Complete || rerun.Verdict.Class != oracle.ClassSafe || rerun.Shard.Attempt == lost.Shard.Attempt {
		t.Errorf("rerun under the same run id: complete %v, %s, attempt %d (the lost one's %d); want a complete SAFE record of a new attempt",
			rerun.Complete, rerun.Verdict, rerun.Shard.Attempt, lost.Shard.Attempt)
	}
	if !strings.Contains(says, "shard 2 of 4 lost") {
		t.Error("the script did not say which shard was lost")
	}

	left, _ := exec.Command("docker", "ps", "-aq", "--filter", "name=^sb-").Output()
	nets, _ := exec.Command("docker", "network", "ls", "-q", "--filter", "name=stockbench-sb-").Output()
	if s := strings.TrimSpace(string(left) + string(nets)); s != "" {
		t.Errorf("containers or networks left behind: %s", s)
	}
	if after := swarmState(t); after != before {
		t.Errorf("the engine's swarm was %s before and is %s after", before, after)
	}
}

// TestSignalAtScale: millions of buyers waiting in line end within seconds of Ctrl-C or
// SIGTERM, the sale still written, its waiting buyers counted as interrupted. (Each of
// them once took a turn of its own to say so: 2.3 s at 10,000,000, 7 s at 30,000,000.)
// The bound is a hang's, not a speed target: a loaded CI machine took 2.7 s.
func TestSignalAtScale(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			s := launch(t, "run", "--lock", "set-nx-ex", "--buyers", "10000000", "--stock", "10", "--redis", "process")
			s.until(t, "[1/1]")
			time.Sleep(1500 * time.Millisecond) // every buyer has arrived and waits for the lock
			signalled := time.Now()
			s.cmd.Process.Signal(sig)
			s.wait(t, bench.ExitInterrupted)
			if took := time.Since(signalled); took > 10*time.Second {
				t.Errorf("the run took %s to end after %s", took.Round(time.Millisecond), sig)
			}
			f, err := results.Read(firstResults(t, s.out)) // nobody bought: no latency plot
			if err != nil {
				t.Fatal(err)
			}
			if o := f.Runs[0].Oracle; f.Complete || o.Interrupted+o.Pending < 1_000_000 {
				t.Errorf("want the sale written, incomplete, its waiting buyers interrupted; got complete=%v, %d interrupted, %d pending",
					f.Complete, o.Interrupted, o.Pending)
			}
			s.nothingLeft(t, f)
		})
	}
}

// TestCheckSchedulerLock runs the shipped scheduler run file: a failover under the
// drop's scheduler fires a wave twice through token, which breaks its threshold, and
// not through fencing, whose store refuses the stale fire.
func TestCheckSchedulerLock(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	stdout, broken := checkFails(t, filepath.Join(examples, "scheduler.json"), out)
	if len(broken) != 1 || !strings.HasPrefix(broken[0], "BROKEN: drop-sale/token/failover: oversold == 0: got 5") {
		t.Errorf("want token's wave fired twice, alone; stdout:\n%s", stdout)
	}
}

// TestFaultRun: a run under a server fault and with Redlock, which need servers beyond
// the shared one, reports the fault's verdict and leaves none of them behind.
func TestFaultRun(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	for _, mode := range []string{"process", "container"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "container" {
				needDocker(t)
			}
			out := t.TempDir()
			// One sale at a time: the documented verdicts asserted here are asserted as the
			// baseline was made (the matrices of make bench, side by side, are gated against
			// it instead).
			cmd := exec.Command(binary, "matrix", "--locks", "token,redlock", "--faults", "redis-restart,failover", "--queues", "",
				"--scenarios", "fault-sale", "--check-linearizable", "--redis", mode, "--parallel", "1", "--out", out)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v:\n%s", err, stderr.String())
			}
			f := readRun(t, out, "latency-fault-sale-redis-restart.png")
			if len(f.Runs) != 4 {
				t.Fatalf("want 4 runs, got %d", len(f.Runs))
			}
			if exp, got := "OVERSOLD", f.Runs[2].Verdict.Class; string(got) != exp {
				t.Errorf("token under failover: want %s, got %s", exp, f.Runs[2].Verdict.Cell())
			}
			token := f.Runs[0]
			if token.Verdict.Class != "OVERSOLD" || len(token.Events) == 0 || token.Linearizability == nil ||
				token.Linearizability.Verdict != oracle.NotLinearizable {
				t.Errorf("token under redis-restart: want OVERSOLD, the restart recorded and a linearizability violation; got %s, %+v, %+v",
					token.Verdict.Cell(), token.Events, token.Linearizability)
			}
			nothingLeft(t, cmd.Process.Pid, f)
		})
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
			if code != bench.ExitUsage || !strings.HasPrefix(last, "stockbench: exit 2: adapter mine: refused hello: ") || !strings.Contains(last, tt.want) ||
				strings.Contains(stderr, "Traceback") || strings.Contains(stderr, "Error:") || stdout != "" {
				t.Errorf("exit %d, want 2 and a last line with %q:\n%s%s", code, tt.want, stdout, stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s was created", out)
			}
		})
	}
}

// TestCheckCatchesTheFlaw runs the shipped run file: the token lock written as scripts
// meets every threshold, among them a ratio to the built-in token lock in the same run;
// the lock with the deliberate flaw lets two holders in with no fault at all, and the
// check fails with one line per broken threshold, recorded in results.json and
// summary.md.
func TestCheckCatchesTheFlaw(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	stdout, broken := checkFails(t, filepath.Join(examples, "stockbench.json"), out)
	if !strings.Contains(stdout, "BROKEN: fault-sale/px-seconds/none: ") {
		t.Errorf("want the flaw caught with no fault; stdout:\n%s", stdout)
	}
	for _, l := range broken {
		switch {
		case strings.Contains(l, "/px-seconds/"):
		case strings.Contains(l, ": sales_per_sec ") || strings.Contains(l, ": p99 "):
			// Speed on a loaded test machine is not the scripts' to answer for; the
			// thresholds' arithmetic is results/gate's test.
			t.Logf("a speed threshold broke on this machine: %s", l)
		default:
			t.Errorf("only the flawed design may break a correctness threshold: %s", l)
		}
	}
	if !strings.Contains(stdout, "check: FAIL, ") {
		t.Errorf("want the verdict last; stdout:\n%s", stdout)
	}
	f := readRun(t, out, "summary.md")
	held, notHeld := 0, 0
	for _, c := range f.Checks {
		if c.Held {
			held++
		} else {
			notHeld++
		}
	}
	if notHeld != len(broken) || held == 0 {
		t.Errorf("results.json records %d held and %d broken; stdout had %d broken", held, notHeld, len(broken))
	}
	dir := filepath.Dir(firstResults(t, out))
	if b, _ := os.ReadFile(filepath.Join(dir, "summary.md")); !strings.Contains(string(b), "**Check: FAIL**") {
		t.Errorf("summary.md does not lead with the check's outcome")
	}
	leftBehind(t, f)
}

// TestDesignFiles: design files join list, run and matrix like built-in designs, and
// are refused with one line when they cannot be.
func TestDesignFiles(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	lock := filepath.Join(examples, "locks", "token-scripts.json")
	flawed := filepath.Join(examples, "locks", "px-seconds.json")
	queue := filepath.Join(examples, "queues", "reliable-scripts.json")

	code, stdout, _ := stockbench(t, "list", "--lock-file", lock, "--queue-file", queue)
	if code != bench.ExitOK || !strings.Contains(stdout, "token-scripts") || !strings.Contains(stdout, "reliable-scripts") {
		t.Errorf("list: want the file designs named, got %d:\n%s", code, stdout)
	}

	// The only design named: run runs it. It documents no verdict, so its finding is
	// damage nobody claimed: exit 1, the sale named.
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "run", "--lock-file", flawed, "--scenario", "fault-sale", "--out", out)
	if code != bench.ExitFailed || !strings.Contains(stdout, "FAIL fault-sale/px-seconds/none: ") {
		t.Fatalf("run: exit %d, want 1 naming the sale:\n%s\n%s", code, stdout, stderr)
	}
	// The flaw lets a second holder in inside the first's lease every time (a broken
	// lock); whether they also oversell is a race, so the broken lock is what is asserted.
	if f := readRun(t, out, "summary.md"); f.Runs[0].Impl != "px-seconds" || f.Runs[0].Oracle.LockBroken == 0 ||
		(f.Runs[0].Verdict.Class != "OVERSOLD" && f.Runs[0].Verdict.Class != "LOCK-BROKEN") {
		t.Errorf("run: want px-seconds OVERSOLD or LOCK-BROKEN, the lock broken, got %s %s", f.Runs[0].Impl, f.Runs[0].Verdict.Cell())
	}

	out = t.TempDir()
	code, _, stderr = stockbench(t, "matrix", "--lock-file", lock, "--queue-file", queue, "--locks", "token-scripts,token",
		"--faults", "none,crash-holder", "--queues", "reliable-scripts", "--queue-faults", "worker-crash", "--fulfils", "idempotent", "--out", out)
	if code != bench.ExitOK {
		t.Fatalf("matrix: exit %d:\n%s", code, stderr)
	}
	f := readRun(t, out, "summary.md")
	got := map[string]string{}
	for _, r := range f.Runs {
		got[r.Impl+"/"+r.FaultPlan()] = r.Verdict.Cell()
	}
	for _, k := range []string{"token-scripts/none", "token-scripts/crash-holder", "token/none", "reliable-scripts/worker-crash"} {
		if got[k] != "SAFE" {
			t.Errorf("matrix: %s: want SAFE, got %q (all: %v)", k, got[k], got)
		}
	}

	// A script that compiles but fails when it runs fails the sale, naming the script.
	dir := t.TempDir()
	fails := writeFile(t, dir, "fails.json", `{"name": "fails", "lock": {"acquire": {"lua": "return redis.call('SET', KEYS[2], 1)", "keys": ["lock"]}, "release": {"lua": "return 1"}}}`)
	out = t.TempDir()
	code, _, stderr = stockbench(t, "run", "--lock-file", fails, "--out", out)
	if code != bench.ExitUnfinished || !strings.Contains(stderr, "incomplete: flash-sale with fails under none failed: fails: acquire script (lock.acquire): ERR ") {
		t.Errorf("a failing script: want exit 3 naming it, got %d:\n%s", code, stderr)
	}
	if f := readRun(t, out, "summary.md"); f.Complete {
		t.Error("a failing script: want the run marked incomplete")
	}

	clash := writeFile(t, dir, "clash.json", `{"name": "token", "lock": {"acquire": {"lua": "return 1"}, "release": {"lua": "return 1"}}}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--lock-file", queue}, "a queue design; pass it with --queue-file"},
		{[]string{"run", "--lock-file", clash}, `"token" is a built-in design's name`},
		{[]string{"matrix", "--lock-file", lock, "--lock-file", lock}, `"token-scripts" is the name of the design in`},
		{[]string{"run", "--lock-file", filepath.Join(dir, "nope.json")}, "design file: open "},
	} {
		code, _, stderr := stockbench(t, append(tc.args, "--out", filepath.Join(dir, "runs"))...)
		if code != bench.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: want exit 2 and one line with %q, got %d:\n%s", tc.args, tc.want, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
		t.Error("bad design files must not create a run directory")
	}
}

// TestDropRun: a scheduled drop through the command, failed over under the 5th wave's
// scheduler: the wave fired twice, said in the summary with who fired it, and a rerun
// command that runs the drop again.
func TestDropRun(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := stockbench(t, "run", "--scenario", "drop-sale", "--lock", "token", "--fault", "failover", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readRun(t, out, "latency-drop-sale-failover.png")
	r := f.Runs[0]
	if r.Verdict.Class != oracle.ClassOversold || r.Oracle.Schedule == nil || r.Oracle.Schedule.FiredTwice != 1 || r.Params.Waves != 8 {
		t.Fatalf("want one wave fired twice, got %s: %+v", r.Verdict, r.Oracle.Schedule)
	}
	rerun := strings.Join(r.Rerun, " ")
	if !strings.Contains(rerun, "--waves 8 --wave-every 250ms") || !strings.Contains(stderr, "3 scheduler instances, stock 40 in 8 waves") {
		t.Errorf("want the drop in the rerun command and the progress line; rerun %q, stderr:\n%s", rerun, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*", "summary.md"))
	summary, err := os.ReadFile(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`wave 5 fired 2 times: by scheduler \d at [0-9.]+m?s, by scheduler \d at`).Match(summary) {
		t.Errorf("want the wave fired twice and who fired it in the summary:\n%s", summary)
	}
	leftBehind(t, f)
}

// TestSweep: a sweep runs one sale per value and design, each run records where it sits,
// and the report plots damage, sales/s and p99 against the setting.
func TestSweep(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, "sweep", "--lock", "set-nx-ex,token", "--vary", "ttl=100ms,1s",
		"--scenario", "slow-holder", "--buyers", "60", "--stock", "20", "--think", "longtail:1ms,300ms,0.3", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readRun(t, out, "sweep-damage-ttl-slow-holder-none.png")
	if len(f.Runs) != 4 {
		t.Fatalf("%d runs, want 2 values x 2 designs", len(f.Runs))
	}
	for _, r := range f.Runs {
		if r.Sweep == nil || r.Sweep.Param != "ttl" || r.Scenario != "slow-holder ttl="+r.Sweep.Value || r.Params.TTL != r.Sweep.Value {
			t.Errorf("run %s/%s: sweep %+v, ttl %s", r.Scenario, r.Impl, r.Sweep, r.Params.TTL)
		}
	}
	// Holders that work 300ms outlive a 100ms TTL and the lock lets a second buyer in; a
	// TTL of a second covers them.
	if short := f.Runs[1]; short.Impl != "token" || short.Oracle.Overlaps == 0 {
		t.Errorf("token at ttl=100ms: %s, want overlaps", short.Verdict)
	}
	if long := f.Runs[3]; long.Impl != "token" || long.Verdict.Class != oracle.ClassSafe {
		t.Errorf("token at ttl=1s: %s, want SAFE", long.Verdict)
	}
	if !strings.Contains(stdout, "slow-holder ttl=100ms") {
		t.Errorf("the table names each point:\n%s", stdout)
	}
}

// TestHeadlinePreset: run takes the headline preset with its own pause rate unless told
// otherwise, through its application instances.
func TestHeadlinePreset(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	code, _, stderr := stockbench(t, "run", "--scenario", "headline", "--lock", "fencing", "--buyers", "400", "--stock", "50", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	f := readRun(t, out, "summary.md")
	r := f.Runs[0]
	if r.Params.Faults != "client-pause:p=0.01:dist=exp" || r.Params.Apps != 4 || r.Params.Serve != 16 || r.DamageRate == nil {
		t.Errorf("headline run: faults %s, apps %d, serve %d, damage rate %v", r.Params.Faults, r.Params.Apps, r.Params.Serve, r.DamageRate)
	}
}

// TestMatrixSideBySide: fault sales side by side (the matrix's default) are recorded in
// the matrix's order, each with its verdict, and leave nothing behind.
func TestMatrixSideBySide(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	cmd := exec.Command(binary, "matrix", "--locks", "token,set-nx-ex", "--faults", "none,crash-holder,slow-work", "--queues", "",
		"--parallel", "4", "--out", out)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v:\n%s", err, stderr.String())
	}
	f := readRun(t, out, "summary.md")
	var got []string
	for _, r := range f.Runs {
		got = append(got, r.Impl+"/"+r.FaultPlan()+": "+string(r.Verdict.Class))
	}
	want := []string{"token/none: SAFE", "set-nx-ex/none: SAFE", "token/crash-holder: SAFE", "set-nx-ex/crash-holder: SAFE",
		"token/slow-work: OVERSOLD", "set-nx-ex/slow-work: OVERSOLD"}
	if !f.Complete || strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("runs %v,\nwant %v", got, want)
	}
	leftBehind(t, f)
}

// TestRuns: --runs draws a sale with seeds of its own, the first the sale's own; the
// record is the worst draw, whose rerun line has its seed; rate thresholds read the
// draws. none oversells 60 buyers reading 20 units at once in every draw (as in
// TestExitStatus); lua cannot.
func TestRuns(t *testing.T) {
	t.Parallel()
	small := []string{"--buyers", "60", "--stock", "20", "--think", "2ms"}
	out := t.TempDir()
	code, stdout, stderr := stockbench(t, append([]string{"run", "--lock", "none", "--runs", "3", "--out", out}, small...)...)
	if code != bench.ExitOK || !strings.Contains(stdout, "Rates over seeds") || !strings.Contains(stdout, "flash-sale/none/none: OVERSOLD 3/3; ") || !strings.Contains(stdout, "OVERSOLD 3/3 (44%-100%)") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	f := readRun(t, out, "")
	r := f.Runs[0]
	if len(f.Runs) != 1 || r.Draws == nil || r.Draws.Runs != 3 || len(r.Draws.Each) != 3 || r.Draws.Each[0].Seed != 1 {
		t.Fatalf("want one record of 3 draws, the first seeded 1: %+v", r.Draws)
	}
	seeds := map[uint64]bool{}
	for _, d := range r.Draws.Each {
		seeds[d.Seed] = true
	}
	if len(seeds) != 3 || !seeds[r.Sale.Seed()] || !strings.Contains(strings.Join(r.Rerun, " "), "--seed "+r.Sale.Get("seed")) {
		t.Errorf("seeds %v; the record's %d, its rerun %q", seeds, r.Sale.Seed(), r.Rerun)
	}

	dir := t.TempDir()
	rf := writeFile(t, dir, "stockbench.json", `{"locks": ["none", "lua"], "scenarios": ["flash-sale"], "faults": ["none"], "queues": [], "runs": 3,
		"settings": {"buyers": 60, "stock": 20, "think": "2ms"},
		"thresholds": {"lua": ["oversold_rate <= 0", "broken_locks_rate <= 0"], "none": ["oversold_rate < 0.5"]}}`)
	code, stdout, stderr = stockbench(t, "check", rf, "--out", t.TempDir())
	if code != bench.ExitFailed || !strings.Contains(stdout, "oversold_rate < 0.5") || strings.Contains(stdout, "BROKEN: flash-sale/lua/") {
		t.Fatalf("check: exit %d, want 1 with none's rate broken and lua's held:\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := stockbench(t, "run", "--lock", "lua", "--runs", "0", "--out", t.TempDir()); code != bench.ExitUsage {
		t.Errorf("--runs 0: exit %d, %s", code, stderr)
	}
}

// TestRunOnExternalRedis: pointed at a user's own Redis, or Redis Cluster, by URL, the harness runs
// sales and queues with the verdicts it gets on its own servers, touches only keys under
// its prefix, and leaves the user's keys and database as they were.
func TestRunOnExternalRedis(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	single := redistest.Start(t).Info.Addr
	cluster := redistest.Cluster(t, 3)
	targets := []struct {
		name string
		args []string
		c    redis.UniversalClient
	}{
		{"server", []string{"--redis-url", "redis://" + single}, redis.NewClient(&redis.Options{Addr: single})},
		{"cluster", []string{"--redis-url", "redis://" + cluster[0] + "?addr=" + cluster[1] + "&addr=" + cluster[2], "--redis-cluster"},
			redis.NewClusterClient(&redis.ClusterOptions{Addrs: cluster})},
	}
	runs := []struct {
		args []string
		want string // the run's verdict class
	}{
		{[]string{"--lock", "lua", "--buyers", "300", "--stock", "50"}, "SAFE"},
		{[]string{"--lock", "token", "--buyers", "200", "--stock", "20"}, "SAFE"},
		{[]string{"--lock", "seed-setnx", "--buyers", "300", "--stock", "20"}, "OVERSOLD"},
		{[]string{"--queue", "stream", "--buyers", "300", "--stock", "50"}, "SAFE"},
	}
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			defer tg.c.Close()
			theirs := map[string]string{"orders": "theirs", "stock": "7", "{stockbench}:stock": "mine", "stockbench:x": "mine too"}
			for k, v := range theirs {
				if err := tg.c.Set(ctx, k, v, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			for _, r := range runs {
				out := t.TempDir()
				code, _, stderr := stockbench(t, append(append([]string{"run", "--out", out}, tg.args...), r.args...)...)
				if code != 0 {
					t.Fatalf("%v: exit %d:\n%s", r.args, code, stderr)
				}
				f := readRun(t, out, "summary.md")
				t.Logf("%v: %s in %s", r.args, f.Runs[0].Verdict, f.Runs[0].Duration.Round(time.Millisecond))
				if got := string(f.Runs[0].Verdict.Class); got != r.want || f.Target.Cluster != (tg.name == "cluster") {
					t.Errorf("%v: class %s (cluster %v), want %s", r.args, got, f.Target.Cluster, r.want)
				}
			}
			for k, v := range theirs {
				if got, err := tg.c.Get(ctx, k).Result(); got != v {
					t.Errorf("their key %q: %q (%v), want %q untouched", k, got, err, v)
				}
			}
			if n := dbSize(ctx, t, tg.c); n != int64(len(theirs)) {
				t.Errorf("%d keys left, want only their %d", n, len(theirs))
			}
		})
	}
}

// TestOldRunDirectory: a run directory of the layout before plots/ (every plot at its
// top, a record without "plots") is still read by report, gate, compare and replay; the
// report rebuilt keeps one copy of each plot, under plots/, and --plots svg writes SVG.
func TestOldRunDirectory(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	out := t.TempDir()
	if code, _, stderr := stockbench(t, "run", "--lock", "lua", "--buyers", "40", "--stock", "10", "--plots", "both", "--out", out); code != 0 {
		t.Fatalf("run: exit %d:\n%s", code, stderr)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(dirs) != 1 {
		t.Fatalf("want one run directory, got %v", dirs)
	}
	old := dirs[0]
	plots, _ := filepath.Glob(filepath.Join(old, "plots", "*"))
	if len(plots) < 4 {
		t.Fatalf("--plots both wrote %v", plots)
	}
	for _, p := range plots { // the older layout: every plot at the top
		if err := os.Rename(p, filepath.Join(old, filepath.Base(p))); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(old, "plots"))
	f, err := results.Read(filepath.Join(old, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	f.Plots = ""
	if err := results.WriteFile(filepath.Join(old, "results.json"), f); err != nil {
		t.Fatal(err)
	}

	for _, args := range [][]string{
		{"report", old},
		{"gate", "--baseline", old, "--current", old},
		{"compare", old, old},
		{"replay", old, "--out", t.TempDir()},
		{"report", old, "--plots", "svg"},
	} {
		if code, stdout, stderr := stockbench(t, args...); code != 0 {
			t.Errorf("%v: exit %d:\n%s\n%s", args, code, stdout, stderr)
		}
	}
	top, _ := filepath.Glob(filepath.Join(old, "*.png"))
	svgs, _ := filepath.Glob(filepath.Join(old, "plots", "*.svg"))
	pngs, _ := filepath.Glob(filepath.Join(old, "plots", "*.png"))
	if len(top) > 0 || len(svgs) == 0 || len(pngs) > 0 {
		t.Errorf("after the rebuilds: %d plots left at the top, %d SVG and %d PNG under plots/ (want 0, some, 0)", len(top), len(svgs), len(pngs))
	}
}

// TestPlan sizes a sale from costs measured here: a plan for ten million buyers names a
// shard count, each shard's size, Redis's share and the run line, and a sale a shard
// cannot hold in memory takes more shards than one it can.
func TestPlan(t *testing.T) {
	t.Parallel() // a whole command of its own: see TestMain
	plan := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := stockbench(t, append([]string{"plan", "--buyers", "10000000", "--rate", "2000", "--calibrate", "2000"}, args...)...)
		if code != 0 {
			t.Fatalf("plan %v: exit %d:\n%s", args, code, stderr)
		}
		t.Logf("%s", stdout)
		return stdout
	}
	shards := func(out string) int {
		var n int
		for _, line := range strings.Split(out, "\n") {
			if _, err := fmt.Sscanf(line, "shards: %d of", &n); err == nil {
				return n
			}
		}
		t.Fatalf("no shards line in:\n%s", out)
		return 0
	}
	roomy := plan("--shard-memory", "8Gi")
	for _, want := range []string{"per buyer", "load generators:", "redis:", "at most", "run it: STOCKBENCH_SHARDS="} {
		if !strings.Contains(roomy, want) {
			t.Errorf("the plan does not say %q", want)
		}
	}
	tight := plan("--shard-memory", "512Mi")
	if a, b := shards(roomy), shards(tight); b <= a || !strings.Contains(tight, "set by memory") {
		t.Errorf("8Gi shards: %d, 512Mi shards: %d; want more of the smaller, set by memory", a, b)
	}
}

// TestInitEveryRoute: init's Python, Node, PHP and Ruby adapters, its Go adapter (built as its
// README says) and its kit test check as written, as TestInit's routes do: the lock
// passes, the broken example fails. The kit's go test runs against this checkout (a
// replace directive), STOCKBENCH_EXAMPLE=broken failing it with the stuck sale.
func TestInitEveryRoute(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	runtimes := map[string][]string{
		"node":   {"node", "-e", "process.env.NODE_PATH='/usr/share/nodejs'; require('module')._initPaths(); require('redis')"},
		"php":    {"php", "-r", "exit(class_exists('Redis') ? 0 : 1);"},
		"ruby":   {"ruby", "-e", `require "redis"`},
		"python": {"/usr/bin/python3", "-c", "import redis"},
	}
	for lang, probe := range runtimes {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			if err := exec.Command(probe[0], probe[1:]...).Run(); err != nil {
				if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
					t.Fatalf("%s's runtime is missing: %v", lang, err)
				}
				t.Skipf("%s's runtime is missing (%v); scripts/ensure-adapters.sh installs it", lang, err)
			}
			initAndCheck(t, nil, "--adapter", lang)
		})
	}
	// A PHP adapter started from a framework's lock: its broken example is the
	// framework's own way to forget the expiry (Symfony's default 300 s TTL, Laravel's
	// lock with no seconds).
	for from, autoload := range map[string]string{"symfony": "/usr/share/php/Symfony/Component/Lock/autoload.php", "laravel": "/usr/share/php/Illuminate/autoload.php"} {
		t.Run("php-"+from, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(autoload); err != nil {
				if os.Getenv("STOCKBENCH_REQUIRE_ADAPTERS") != "" {
					t.Fatalf("%s is missing: %v", from, err)
				}
				t.Skipf("%s is missing (%v); scripts/ensure-adapters.sh installs it", from, err)
			}
			initAndCheck(t, nil, "--adapter", "php", "--from", from)
		})
	}
	goBin, err := exec.LookPath("go") // not runtime.GOROOT: a -trimpath build has none
	if err != nil {
		t.Fatal(err)
	}
	t.Run("go", func(t *testing.T) {
		t.Parallel()
		// go mod tidy would ask the checksum database; this checkout's go.sum has go-redis.
		initAndCheck(t, []string{"sh", "-c", "cp " + filepath.Join(root, "go.sum") + " . && " + goBin + " build -mod=mod -o mylock ."}, "--adapter", "go")
	})
	t.Run("go-kit", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), "mine")
		if code, stdout, stderr := stockbench(t, "init", "--go", "--dir", dir); code != bench.ExitOK || !strings.Contains(stdout, "STOCKBENCH_EXAMPLE=broken go test") {
			t.Fatalf("init --go: exit %d:\n%s\n%s", code, stdout, stderr)
		}
		sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(filepath.Join(dir, "go.mod"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\nrequire github.com/stockbench/stockbench v0.0.0\n\nreplace github.com/stockbench/stockbench => %s\n", root)
		f.Close()
		goTest := func(env ...string) (string, error) {
			// -race, as make test built the kit: a plain build would compile it all again.
			cmd := exec.Command(goBin, "test", "-race", "-count=1", "-mod=mod", "./...")
			cmd.Dir, cmd.Env = dir, append(append(os.Environ(), "GOFLAGS=-mod=mod"), env...)
			out, err := cmd.CombinedOutput()
			return string(out), err
		}
		if out, err := goTest(); err != nil {
			t.Fatalf("the kit test of init's lock: %v\n%s", err, out)
		}
		out, err := goTest("STOCKBENCH_EXAMPLE=broken")
		if _, failed := err.(*exec.ExitError); !failed || !strings.Contains(out, "mylock under crash-holder: claimed at worst SAFE, got STUCK") {
			t.Fatalf("the broken example: want go test to fail with the stuck sale, got %v:\n%s", err, out)
		}
	})
}

// TestRuntimesImage builds the image that runs every route with nothing installed on
// the host (scripts/runtimes-image.sh, its base made with debootstrap the first time)
// and runs, in it, the check of init's adapter in each language the image carries: each
// passes on init's lock and fails on the broken example, with the runtimes, Redis and
// the command all inside the container.
func TestRuntimesImage(t *testing.T) {
	needDocker(t)
	t.Parallel()
	build := exec.Command("bash", filepath.Join("..", "..", "scripts", "runtimes-image.sh"))
	out, err := build.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("runtimes-image.sh: %v\n%s", err, exit.Stderr)
		}
		t.Fatal(err)
	}
	image := strings.TrimSpace(string(out))
	for _, lang := range []string{"php", "python", "node", "ruby"} {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), lang)
			if code, stdout, stderr := stockbench(t, "init", "--adapter", lang, "--dir", dir); code != bench.ExitOK {
				t.Fatalf("init: exit %d:\n%s\n%s", code, stdout, stderr)
			}
			for file, want := range map[string]int{"stockbench.json": bench.ExitOK, "stockbench-broken.json": bench.ExitFailed} {
				cmd := exec.Command("docker", "run", "--rm", "-v", dir+":/work", image, "check", file)
				out, _ := cmd.CombinedOutput()
				if got := cmd.ProcessState.ExitCode(); got != want || !strings.Contains(string(out), "redis: process /usr/bin/redis-server") {
					t.Errorf("docker run %s check %s: exit %d, want %d, Redis a process in the container:\n%s", image, file, got, want, out)
				}
			}
		})
	}
}

// TestWorkflowKitRunsHere runs the commands of the templates' go-kit jobs, GitHub's and
// GitLab's, here, in a directory stockbench init --go wrote, its go.mod reaching this
// checkout: gotestsum installs, the kit's test passes on init's lock, and junitparser
// reads its JUnit file with the test passed.
func TestWorkflowKitRunsHere(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	prepare := func(dir string) {
		sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
		}
		f, ferr := os.OpenFile(filepath.Join(dir, "go.mod"), os.O_APPEND|os.O_WRONLY, 0)
		if err = errors.Join(err, ferr); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "\nrequire github.com/stockbench/stockbench v0.0.0\n\nreplace github.com/stockbench/stockbench => %s\n", root)
		f.Close()
	}
	for ci, scripts := range map[string]func(*testing.T, string) []string{"github": githubScripts, "gitlab": gitlabScripts} {
		t.Run(ci, func(t *testing.T) {
			// -mod=mod: the replaced module's requirements, from the checkout's go.sum.
			dir, _ := runJob(t, "go-kit", scripts(t, "go-kit"), prepare, "GOFLAGS=-mod=mod")
			lines := readJUnit(t, filepath.Join(dir, "stockbench-junit.xml"))
			if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "TestUnderSales\tpassed") }) {
				t.Errorf("want TestUnderSales passed in the JUnit file, got:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}
