package live

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

//go:embed page.html
var page []byte

// Listen opens the dashboard's address: host:port, or :port for the loopback interface
// (a run's figures stay on this machine unless a host is named); port 0 picks a free one.
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--dashboard %q: want host:port or :port: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	l, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, fmt.Errorf("--dashboard %s: %w", addr, err)
	}
	return l, nil
}

// Handler serves the page on /, its state as JSON on /state and the figures as
// OpenMetrics (or Prometheus's text format, as the scraper asks) on /metrics.
func (b *Board) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(b)
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		ended := b.reading(&b.scraper)
		metrics.ServeHTTP(w, r)
		b.readAfter(&b.scraper, ended)
	})
	mux.HandleFunc("GET /state", func(w http.ResponseWriter, r *http.Request) {
		ended := b.reading(&b.watcher)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(b.State())
		b.readAfter(&b.watcher, ended)
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b.render(true))
	})
	return mux
}

// lastScrape is how long a run that was watched waits, once over, for its readers to
// read the final figures: a scraper every second, as deploy/prometheus.yml's, and the
// live page, which asks every second, get them.
const lastScrape = 3 * time.Second

// reading notes a read by one of r's kind and reports whether the run is over.
func (b *Board) reading(r *reader) (ended bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	r.read = true
	return b.state.Ended
}

// readAfter closes r's channel once a reader of its kind has read the ended run.
func (b *Board) readAfter(r *reader, ended bool) {
	if ended {
		r.once.Do(func() { close(r.after) })
	}
}

// Serve serves the board on l until the returned func is called. Then, for each kind of
// reader that read during the run (a scraper of /metrics, the live page), it waits up to
// lastScrape in all for one more read after Finish, so that Prometheus keeps the sale's
// last second and the page shows the verdicts; then a second at most for the requests
// under way.
func (b *Board) Serve(l net.Listener) (stop func()) {
	srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "stockbench: dashboard:", err)
		}
	}()
	return func() {
		b.mu.Lock()
		var waits []chan struct{}
		for _, r := range []*reader{&b.scraper, &b.watcher} {
			if r.read && b.state.Ended {
				waits = append(waits, r.after)
			}
		}
		b.mu.Unlock()
		timer := time.NewTimer(lastScrape)
		defer timer.Stop()
	wait:
		for _, w := range waits {
			select {
			case <-w:
			case <-timer.C:
				break wait
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}
}

// Save writes the page with the board's state in it, as one file that opens offline.
func (b *Board) Save(path string) error {
	if err := os.WriteFile(path, b.render(false), 0o644); err != nil {
		return fmt.Errorf("dashboard: save: %w", err)
	}
	return nil
}

// render is the page with the state inlined; live pages poll /state for the rest.
// json.Marshal escapes <, > and &, so no string of the state can end the script.
func (b *Board) render(live bool) []byte {
	st, err := json.Marshal(b.State())
	if err != nil {
		st = []byte(`{"sales":[]}`) // the state is plain data: this does not happen
	}
	out := bytes.Replace(page, []byte("/*STATE*/"), st, 1)
	return bytes.Replace(out, []byte("/*LIVE*/"), []byte(fmt.Sprint(live)), 1)
}
