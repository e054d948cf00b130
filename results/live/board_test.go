package live

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/stockbench/stockbench/faults"
	"github.com/stockbench/stockbench/oracle"
	"github.com/stockbench/stockbench/results"
	"github.com/stockbench/stockbench/scenarios"
)

// hist is a histogram of values in microseconds.
func hist(us ...int64) *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 3)
	for _, v := range us {
		h.RecordValue(v)
	}
	return h
}

// A sale's reports become points whose quantiles are the interval's, not the sale's so
// far; its faults become windows; its end brings the verdict and the rerun command.
func TestBoardFollowsASale(t *testing.T) {
	b := NewBoard("r1", "--lock set-nx-ex", []Sale{{"flash-sale", "set-nx-ex", "client-pause"}, {"flash-sale", "lua", "none"}})
	first := hist(1000, 1000, 1000, 1000)
	watch := b.Watch(0)
	watch(scenarios.Progress{Sold: 4, Stock: 10, Done: 4, Buyers: 12, Elapsed: time.Second, SalesPerSec: 4, Latency: first})
	second := hist(1000, 1000, 1000, 1000, 50000, 50000)
	watch(scenarios.Progress{Sold: 12, Stock: 10, Done: 6, Buyers: 12, Elapsed: 2 * time.Second, SalesPerSec: 8, Latency: second,
		Seen:   scenarios.Seen{Overlaps: 3},
		Faults: []faults.Event{{At: 500 * time.Millisecond, Fault: faults.ClientPause, Detail: "holder 5 paused 3s"}},
		Under:  []faults.Event{{Began: 1500 * time.Millisecond, At: 2 * time.Second, Fault: faults.RedisPause, Detail: "under way (holder 6)"}}})

	st := b.State()
	s := st.Sales[0]
	if s.State != Running || s.Sold != 12 || s.Oversold != 2 || s.Seen.Overlaps != 3 || len(s.Points) != 2 {
		t.Fatalf("running sale: %+v", s)
	}
	if p := s.Points[1]; p.P50 == nil || *p.P50 < 49 || *p.P50 > 51 {
		t.Errorf("the second second's p50 is its own 50 ms, got %v", p.P50)
	}
	if st.Sales[1].State != Waiting {
		t.Errorf("the second sale has not started: %+v", st.Sales[1])
	}
	if w := s.Windows; len(w) != 2 || w[0].From != 0.5 || w[1].From != 1.5 || w[1].To != 2 || !w[1].Open {
		t.Errorf("windows: %+v", w)
	}

	run := results.Run{Verdict: oracle.Verdict{Class: oracle.ClassOversold, Count: 2}, Rerun: []string{"run", "--lock", "set-nx-ex"}}
	b.Ended(0, run)
	watch(scenarios.Progress{Sold: 1, Elapsed: 3 * time.Second}) // a late report changes nothing
	s = b.State().Sales[0]
	if s.State != Done || s.Cell != run.Verdict.Cell() || s.Rerun != "stockbench run --lock set-nx-ex" || s.Sold != 12 {
		t.Errorf("done sale: %+v", s)
	}
}

// /metrics serves every started sale as OpenMetrics: counters, the latency histogram in
// seconds, the verdict once done, and a server fault under way as active.
func TestMetrics(t *testing.T) {
	b := NewBoard("r1", "", []Sale{{"flash-sale", "set-nx-ex", "redis-pause"}, {"flash-sale", "lua", "none"}})
	b.Watch(0)(scenarios.Progress{Sold: 7, Stock: 10, Done: 7, Buyers: 10, Elapsed: time.Second, Latency: hist(200, 3000, 3000),
		Seen:  scenarios.Seen{Overlaps: 2, Errors: 1},
		Under: []faults.Event{{Began: time.Second, At: time.Second, Fault: faults.RedisPause}}})
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("content type %q", ct)
	}
	lv := `design="set-nx-ex",faults="redis-pause",sale="1",scenario="flash-sale"`
	for _, want := range []string{
		`stockbench_sold_total{` + lv + `} 7`,
		`stockbench_overlaps_seen_total{` + lv + `} 2`,
		`stockbench_errors_total{` + lv + `} 1`,
		`stockbench_running{` + lv + `} 1`,
		`stockbench_latency_seconds_bucket{` + lv + `,le="0.00025"} 1`,
		`stockbench_latency_seconds_bucket{` + lv + `,le="0.005"} 3`,
		`stockbench_latency_seconds_count{` + lv + `} 3`,
		`stockbench_fault_active{design="set-nx-ex",fault="redis-pause",faults="redis-pause",sale="1",scenario="flash-sale"} 1`,
		`stockbench_sales{state="waiting"} 1`,
		"# EOF",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s in\n%s", want, text)
		}
	}
	if strings.Contains(text, `design="lua"`) {
		t.Error("a sale not started has series")
	}
	b.Ended(0, results.Run{Verdict: oracle.Verdict{Class: oracle.ClassSafe}})
	resp, _ = http.Get(srv.URL + "/metrics")
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `stockbench_verdict{class="SAFE",` + lv[:strings.Index(lv, ",sale")] + `,sale="1",scenario="flash-sale"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("no %s in\n%s", want, body)
	}
}

// The saved page carries its state and asks the network for nothing; a string of the
// state cannot end its script.
func TestSavedPage(t *testing.T) {
	b := NewBoard("r1", "--out </script><b>", []Sale{{"flash-sale", "lua", "none"}})
	b.Finish("interrupted")
	path := filepath.Join(t.TempDir(), "dashboard.html")
	if err := b.Save(path); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(path)
	text := string(page)
	if !strings.Contains(text, `const LIVE = false;`) || !strings.Contains(text, `"incomplete":"interrupted"`) {
		t.Error("the saved page is not the run's final state")
	}
	if strings.Count(text, "</script>") != 2 {
		t.Error("the state ended a script")
	}
	if m := regexp.MustCompile(`(src|href)\s*=\s*["']?https?:|@import|url\(`).FindString(text); m != "" {
		t.Errorf("the page fetches %q", m)
	}
}

// Listen takes host:port or :port, on the loopback interface when no host is named.
func TestListen(t *testing.T) {
	l, err := Listen(":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.HasPrefix(l.Addr().String(), "127.0.0.1:") {
		t.Errorf(":0 listens on %s", l.Addr())
	}
	for _, bad := range []string{"8080", "localhost", l.Addr().String()} {
		if l2, err := Listen(bad); err == nil {
			l2.Close()
			t.Errorf("Listen(%q) took it", bad)
		}
	}
}

// Sales side by side report while the page and a scraper read: the board keeps each
// sale's own points (go test -race checks the locking).
func TestBoardSideBySide(t *testing.T) {
	b := NewBoard("r1", "", []Sale{{"fault-sale", "token", "client-pause"}, {"fault-sale", "lua", "client-pause"}, {"fault-sale", "fencing", "client-pause"}})
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			watch := b.Watch(i)
			for n := range 20 {
				watch(scenarios.Progress{Sold: int64(n), Stock: 20, Elapsed: time.Duration(n+1) * time.Second, Latency: hist(int64(1000 * (n + 1)))})
			}
			b.Ended(i, results.Run{Verdict: oracle.Verdict{Class: oracle.ClassSafe}})
		})
	}
	wg.Go(func() {
		for range 20 {
			for _, path := range []string{"/metrics", "/state", "/"} {
				if resp, err := http.Get(srv.URL + path); err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}
		}
	})
	wg.Wait()
	for i, s := range b.State().Sales {
		if s.State != Done || len(s.Points) != 20 || s.Sold != 19 {
			t.Errorf("sale %d: %s, %d points, sold %d", i, s.State, len(s.Points), s.Sold)
		}
	}
}

// TestServerWaitsForItsReaders: once the run is over, the server stays up until each
// kind of reader that read during the run (the live page, a scraper) has read the ended
// run, so that the page shows the verdicts; a reader that never comes back holds it
// lastScrape at most, and a run nobody read stops at once.
func TestServerWaitsForItsReaders(t *testing.T) {
	get := func(url string) (bool, error) {
		resp, err := http.Get(url)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		var s State
		err = json.NewDecoder(resp.Body).Decode(&s)
		return s.Ended, err
	}
	for _, tc := range []struct {
		name       string
		read, back bool
		atLeast    time.Duration
		atMost     time.Duration
	}{
		{"the page reads the end", true, true, 400 * time.Millisecond, lastScrape},
		{"the page never comes back", true, false, lastScrape, lastScrape + time.Second},
		{"nobody read", false, false, 0, 500 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewBoard("r1", "", []Sale{{"flash-sale", "lua", "none"}})
			l, err := Listen("127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			url := "http://" + l.Addr().String() + "/state"
			stop := b.Serve(l)
			if tc.read {
				if _, err := get(url); err != nil {
					t.Fatal(err)
				}
			}
			b.Finish("")
			var ended bool
			var readErr error
			var wg sync.WaitGroup
			if tc.back {
				wg.Go(func() {
					time.Sleep(400 * time.Millisecond) // the page's next poll
					ended, readErr = get(url)
				})
			}
			began := time.Now()
			stop()
			took := time.Since(began)
			wg.Wait()
			if tc.back && (readErr != nil || !ended) {
				t.Errorf("the page's read after the end: ended %v, %v", ended, readErr)
			}
			if took < tc.atLeast || took > tc.atMost {
				t.Errorf("stopped after %s, want from %s to %s", took.Round(time.Millisecond), tc.atLeast, tc.atMost)
			}
		})
	}
}
