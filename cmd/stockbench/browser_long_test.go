//go:build long

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/stockbench/stockbench/results"
)

// browser is the Chromium the browser tests run. They are skipped without one, unless
// STOCKBENCH_REQUIRE_BROWSER is set (CI installs Debian's chromium and sets it).
func browser(t *testing.T) string {
	return tool(t, "STOCKBENCH_REQUIRE_BROWSER", "chromium", "chromium", "chromium-browser", "google-chrome", "chrome")
}

// tool is the first of names on PATH. Without one the test is skipped, unless the
// environment sets require: then it fails, naming Debian's package.
func tool(t *testing.T, require, pkg string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv(require) != "" {
		t.Fatalf("no %s found and %s is set: apt-get install %s", names[0], require, pkg)
	}
	t.Skipf("no %s on PATH (apt-get install %s)", names[0], pkg)
	return ""
}

// checkInBrowser opens page in headless Chromium and returns what is wrong with it (each
// console error, uncaught exception, undecoded image, or a matrix without coloured
// cells) and a full-page screenshot.
func checkInBrowser(t *testing.T, exe, page string) (problems []string, shot []byte) {
	t.Helper()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 800))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`0`)); err != nil {
		t.Fatalf("chromium: %v", err) // the browser starts here, before Console subscribes
	}
	lctx, stop := context.WithCancel(ctx)
	messages := chromedp.Console(lctx)
	var logged []chromedp.ConsoleMessage
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			logged = append(logged, m)
		}
	}()
	eval := func(js string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
		if err != nil {
			t.Fatalf("chromium: %s: %v", js, err)
		}
		return n
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	imgs := eval(`document.images.length`)
	decoded := eval(`Array.from(document.images).filter(i => i.complete && i.naturalWidth > 100).length`)
	cells := eval(`document.querySelectorAll("table.matrix td[class^=v-]:not(.v-none)").length`)
	// At 1280 px nothing may stick out of the page, and every matrix's last column must be
	// reachable: it fits, or its box scrolls to it.
	overflow := eval(`document.documentElement.scrollWidth - window.innerWidth`)
	unreachable := eval(`Array.from(document.querySelectorAll("table.matrix")).filter(t => {
		const box = t.parentElement, last = t.rows[0].cells[t.rows[0].cells.length - 1];
		box.scrollLeft = box.scrollWidth;
		const fits = last.getBoundingClientRect().right <= box.getBoundingClientRect().right + 1;
		box.scrollLeft = 0;
		return !fits || box.getBoundingClientRect().right > window.innerWidth;
	}).length`)
	// A harmed lock cell links to its violations' timelines, each drawn at a legible size.
	harmed := eval(`document.querySelectorAll("table.matrix td.v-OVERSOLD, table.matrix td.v-OVERLAP, table.matrix td.v-LOCKBROKEN").length`)
	linked := eval(`document.querySelectorAll('table.matrix a[href^="#violations-"]').length`)
	dangling := eval(`Array.from(document.querySelectorAll('a[href^="#"]')).filter(a => !document.getElementById(a.getAttribute("href").slice(1))).length`)
	timelines := eval(`document.querySelectorAll("svg.timeline").length`)
	illegible := eval(`Array.from(document.querySelectorAll("svg.timeline")).filter(s => {
		const r = s.getBoundingClientRect();
		return r.width < 600 || r.height < 60 || r.right > window.innerWidth || s.querySelectorAll("rect").length == 0;
	}).length`)
	// The first screen, 1280x800, holds the verdicts: the whole opening, which names every
	// class earned, and no plot above it.
	opening := eval(`(() => { const g = document.getElementById("glance"); if (!g) return -1;
		const list = g.nextElementSibling; return Math.ceil(list.getBoundingClientRect().bottom); })()`)
	plotAbove := eval(`(() => { const g = document.getElementById("glance"), img = document.querySelector("figure img");
		return g && img && img.getBoundingClientRect().top < g.getBoundingClientRect().top ? 1 : 0; })()`)
	// An exploration's first screen holds its answer instead: the conclusion and the
	// first row of the regions' table (what differs there, its smallest sale).
	answer := eval(`(() => { const a = document.getElementById("answer"); if (!a) return -1;
		const parts = [a.querySelector("p.answer"), a.querySelector("table.explore tr:nth-child(2)")];
		return Math.ceil(Math.max(...parts.filter(p => p).map(p => p.getBoundingClientRect().bottom))); })()`)
	if first, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil {
		keep(t, strings.TrimSuffix(filepath.Base(page), ".html")+"-first-screen.png", first)
	}
	shot, err = chromedp.Run(ctx, chromedp.FullScreenshot(80))
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	stop()
	<-done
	for _, m := range logged {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			problems = append(problems, m.String())
		}
	}
	if imgs == 0 || decoded != imgs {
		problems = append(problems, fmt.Sprintf("plots: %d of %d images decoded", decoded, imgs))
	}
	if cells == 0 {
		problems = append(problems, "the verdict matrix has no coloured cells")
	}
	if overflow > 0 {
		problems = append(problems, fmt.Sprintf("the page is %d px wider than a 1280 px window", overflow))
	}
	if harmed > 0 && (linked == 0 || timelines == 0) {
		problems = append(problems, fmt.Sprintf("%d harmed cells, %d linked to timelines, %d timelines drawn", harmed, linked, timelines))
	}
	if dangling > 0 {
		problems = append(problems, fmt.Sprintf("%d links lead to no element of the page", dangling))
	}
	if illegible > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d timelines are not drawn legibly within the window", illegible, timelines))
	}
	if answer > 800 {
		problems = append(problems, fmt.Sprintf("the first screen (1280x800) does not hold the exploration's answer: it ends at %d px", answer))
	}
	if answer < 0 && (opening < 0 || opening > 800 || plotAbove > 0) {
		problems = append(problems, fmt.Sprintf("the first screen (1280x800) does not hold the verdicts: the opening ends at %d px (-1: none), a plot above it: %v", opening, plotAbove > 0))
	}
	if unreachable > 0 {
		problems = append(problems, fmt.Sprintf("%d matrices clip their last columns at 1280 px", unreachable))
	}
	t.Logf("%s: %d plots, %d decoded, %d coloured matrix cells, %d timelines, screenshot %d bytes", filepath.Base(page), imgs, decoded, cells, timelines, len(shot))
	return problems, shot
}

// widen writes, beside the run in dir, a run whose lock matrix has the first run under
// 14 fault plans with long names (as make bench-infra's are), and returns its directory.
func widen(t *testing.T, dir string) string {
	t.Helper()
	f, err := results.Read(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	base := f.Runs[0]
	f.Runs = nil
	for i := range 14 {
		for _, impl := range []string{"token-watchdog", "redislock"} {
			r := base
			r.Impl, r.Params.Faults = impl, fmt.Sprintf("redis-restart:persist=aof-everysec:nth=%d", i+1)
			f.Runs = append(f.Runs, r)
		}
	}
	wide := filepath.Join(t.TempDir(), "wide")
	if err := os.MkdirAll(wide, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteFile(filepath.Join(wide, "results.json"), f); err != nil {
		t.Fatal(err)
	}
	return wide
}
