//go:build long

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// prometheusBinary is Debian's prometheus, which scrapes a live run in the tests; see
// tool (STOCKBENCH_REQUIRE_PROMETHEUS, which CI sets after scripts/ensure-prometheus.sh).
func prometheusBinary(t *testing.T) string {
	return tool(t, "STOCKBENCH_REQUIRE_PROMETHEUS", "prometheus", "prometheus")
}

// browserContext is a headless Chromium tab that logs each console error as a test
// error, closed with the test.
func browserContext(t *testing.T, exe string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 1000))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancel)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`0`)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				t.Errorf("console: %s", m.String())
			}
		}
	}()
	return ctx
}

// keep writes an artefact of the test into bin/artefacts.
func keep(t *testing.T, name string, b []byte) {
	art := filepath.Join("..", "..", "bin", "artefacts")
	if err := os.MkdirAll(art, 0o755); err == nil {
		os.WriteFile(filepath.Join(art, name), b, 0o644)
	}
}

// savedState is the state a saved dashboard carries.
func savedState(t *testing.T, path string) (st struct {
	Sales []struct {
		Sold int64  `json:"sold"`
		Cell string `json:"cell"`
	} `json:"sales"`
}) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)<script id="state" type="application/json">(.*?)</script>`).FindSubmatch(b)
	if m == nil {
		t.Fatal("the saved page carries no state")
	}
	if err := json.Unmarshal(m[1], &st); err != nil || len(st.Sales) != 1 {
		t.Fatalf("the saved page's state: %v, %d sales", err, len(st.Sales))
	}
	return st
}

// bucketOf is the bucket of /metrics' latency histogram that holds v seconds.
func bucketOf(v float64) (lo, hi float64) {
	bounds := []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}
	for _, b := range bounds {
		if v <= b {
			return lo, b
		}
		lo = b
	}
	return lo, lo
}

// grafanaExprs are the PromQL queries of the shipped Grafana dashboard, its panels' and
// its annotations', with its variables as Grafana fills them for "All".
func grafanaExprs(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "monitoring", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if s, ok := e.(string); ok && k == "expr" {
					exprs = append(exprs, s)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	walk(dash)
	if len(exprs) < 8 {
		t.Fatalf("grafana-dashboard.json: %d queries", len(exprs))
	}
	fill := strings.NewReplacer("$design", ".*", "$scenario", ".*", "$faults", ".*", "$__rate_interval", "5s", "$__range", "5m")
	for i := range exprs {
		exprs[i] = fill.Replace(exprs[i])
	}
	return exprs
}

// promServer is a Prometheus the test started, scraping the run at host with the
// configuration deploy/monitoring/prometheus.yml ships.
type promServer struct{ api string }

func startPrometheus(t *testing.T, exe, host string) promServer {
	t.Helper()
	conf, err := os.ReadFile(filepath.Join("..", "..", "deploy", "monitoring", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), "127.0.0.1:9464") {
		t.Fatal("prometheus.yml does not scrape 127.0.0.1:9464")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "prometheus.yml")
	os.WriteFile(path, []byte(strings.ReplaceAll(string(conf), "127.0.0.1:9464", host)), 0o644)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := l.Addr().String()
	l.Close()
	cmd := exec.Command(exe, "--config.file="+path, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen, "--log.level=warn")
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus:\n%s", log.String())
		}
	})
	return promServer{api: "http://" + listen + "/api/v1/query"}
}

// result asks expr and returns the answer's status and its first sample's value.
func (p promServer) result(expr string) (samples int, v float64, err error) {
	resp, err := http.Get(p.api + "?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return 0, 0, fmt.Errorf("%s: %s", expr, body)
	}
	if r.Status != "success" {
		return 0, 0, fmt.Errorf("%s: %s", expr, r.Error)
	}
	if len(r.Data.Result) == 0 {
		return 0, 0, nil
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err = strconv.ParseFloat(s, 64)
	return len(r.Data.Result), v, err
}

// run asks expr, which must be valid PromQL.
func (p promServer) run(t *testing.T, expr string) {
	t.Helper()
	if _, _, err := p.result(expr); err != nil {
		t.Errorf("PromQL: %v", err)
	}
}

// query is expr's value, which must have one.
func (p promServer) query(t *testing.T, expr string) float64 {
	t.Helper()
	n, v, err := p.result(expr)
	if err != nil || n == 0 {
		t.Errorf("PromQL %s: %d samples, %v", expr, n, err)
	}
	return v
}

// wait asks expr until it has a value, for 30 s: Prometheus starts and scrapes first.
func (p promServer) wait(t *testing.T, expr string) float64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, v, err := p.result(expr)
		if err == nil && n > 0 {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("PromQL %s: nothing in 30 s (%v)", expr, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
