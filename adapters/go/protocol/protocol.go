// Package protocol speaks stockbench's adapter protocol (adapters/PROTOCOL.md, version 3)
// for a Go adapter: it reads hello, connects as hello says, and answers each request
// with what a handler returns, sale after sale in one process.
package protocol

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// Hello is the first line the harness sends.
type Hello struct {
	Op       string         `json:"op"`
	Versions []int          `json:"versions"`
	Redis    Where          `json:"redis"`
	Keys     map[string]any `json:"keys"`
	TTLms    int64          `json:"ttl_ms"`
	// VisibilityMs is a queue's visibility timeout; TermGraceMs the grace a deploy's
	// SIGTERM gives before its SIGKILL (term-holder, worker-term).
	VisibilityMs int64           `json:"visibility_ms"`
	TermGraceMs  int64           `json:"term_grace_ms"`
	Raw          json.RawMessage `json:"-"`

	sale *sale // what ends with the sale (Defer)
}

// sale is what one sale's set-up left to undo once it ends, and what hello's answer
// says besides what the set-up returns.
type sale struct {
	deferred []func()
	answer   Reply
}

// Answer adds key to hello's answer (a queue's redelivery_ms, say).
func (h Hello) Answer(key string, v any) {
	if h.sale != nil {
		if h.sale.answer == nil {
			h.sale.answer = Reply{}
		}
		h.sale.answer[key] = v
	}
}

// Defer runs f when the sale this hello began ends: at bye (protocol 3: the process
// then serves the next sale) or once stdin closes. An adapter closes there the clients
// its set-up made, so that a process serving sale after sale keeps none of an earlier
// sale's connections. Last deferred, first run.
func (h Hello) Defer(f func()) {
	if h.sale != nil {
		h.sale.deferred = append(h.sale.deferred, f)
	}
}

func (s *sale) end() {
	for i := len(s.deferred) - 1; i >= 0; i-- {
		s.deferred[i]()
	}
	s.deferred = nil
}

// Where is where the adapter connects.
type Where struct {
	Addr     string `json:"addr"`
	Username string `json:"username"`
	Password string `json:"password"`
	DB       int    `json:"db"`
	Sentinel *struct {
		Addrs  []string `json:"addrs"`
		Master string   `json:"master"`
	} `json:"sentinel"`
	Cluster []string `json:"cluster"`
	// Nodes is every lock server's address, Addr first, for a lock over several servers
	// (an adapter that supports "nodes", run with --adapter-nodes).
	Nodes []string `json:"nodes"`
}

// Request is any request after hello; each op reads its own fields.
type Request struct {
	ID    int64  `json:"id"`
	Op    string `json:"op"`
	Key   string `json:"key"`
	TTLms int64  `json:"ttl_ms"`
	Lease string `json:"lease"`
	// A queue's: the order enqueued and its place in line (enqueue), the worker that
	// asks and how long it waits (dequeue), the task acknowledged (ack).
	Order  string `json:"order"`
	Seq    int64  `json:"seq"`
	Worker string `json:"worker"`
	WaitMs int64  `json:"wait_ms"`
	Task   string `json:"task"`
}

// Reply is a reply's fields besides its id.
type Reply map[string]any

// Handler answers one request; an error becomes the reply's error.
type Handler func(ctx context.Context, req Request) (Reply, error)

// Servers are the lock servers hello names: Nodes, or Addr alone.
func (w Where) Servers() []Where {
	if len(w.Nodes) == 0 {
		return []Where{w}
	}
	out := make([]Where, len(w.Nodes))
	for i, addr := range w.Nodes {
		out[i] = Where{Addr: addr, Username: w.Username, Password: w.Password, DB: w.DB}
	}
	return out
}

// Client is a client of the server hello names, as a Go service would make one: through
// the sentinels under a Sentinel group, a cluster client under a cluster, else of addr.
// A connect waits 1 s, a reply 2 s, inside the protocol's 15 s; nothing is retried.
func Client(w Where) redis.UniversalClient {
	o := redis.UniversalOptions{Addrs: []string{w.Addr}, Username: w.Username, Password: w.Password, DB: w.DB,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, MaxRetries: -1}
	switch {
	case w.Sentinel != nil:
		o.Addrs, o.MasterName = w.Sentinel.Addrs, w.Sentinel.Master
	case len(w.Cluster) > 0:
		o.Addrs, o.IsClusterMode = w.Cluster, true
	}
	return redis.NewUniversalClient(&o)
}

// Serve reads hello from in, builds the adapter with setUp, answers hello with what it
// supports and documents, and then each request with handle's reply, until in closes.
// Under protocol 3 a bye ends the sale (what setUp deferred runs) and the next hello
// begins another, so that one process serves sale after sale.
func Serve(in io.Reader, out io.Writer, setUp func(Hello) (Handler, []string, map[string][]string, error)) error {
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 1<<16), 1<<20)
	enc := json.NewEncoder(out)
	for first := true; ; first = false {
		if !lines.Scan() {
			if first {
				return errors.New("no hello")
			}
			return lines.Err()
		}
		again, err := serveSale(lines, enc, setUp)
		if err != nil || !again {
			return err
		}
	}
}

// serveSale serves one sale from its hello, already scanned, to its bye (again) or to
// the end of in.
func serveSale(lines *bufio.Scanner, enc *json.Encoder, setUp func(Hello) (Handler, []string, map[string][]string, error)) (again bool, err error) {
	h := Hello{sale: &sale{}}
	if err := json.Unmarshal(lines.Bytes(), &h); err != nil || h.Op != "hello" || !contains(h.Versions, 2) {
		enc.Encode(Reply{"ok": false, "error": "want hello, protocol 2 or 3"})
		return false, fmt.Errorf("bad hello: %s", lines.Bytes())
	}
	defer h.sale.end()
	handle, supports, documented, err := setUp(h)
	if err != nil {
		enc.Encode(Reply{"ok": false, "error": err.Error()})
		return false, err
	}
	version := 2
	if contains(h.Versions, 3) {
		version = 3
	}
	answer := Reply{"ok": true, "protocol": version, "supports": supports, "documented": documented}
	for k, v := range h.sale.answer {
		answer[k] = v
	}
	if err := enc.Encode(answer); err != nil {
		return false, err
	}
	for lines.Scan() {
		var req Request
		if err := json.Unmarshal(lines.Bytes(), &req); err != nil {
			return false, fmt.Errorf("read request: %w", err)
		}
		if req.Op == "bye" && version == 3 {
			h.sale.end()
			return true, enc.Encode(Reply{"id": req.ID, "ok": true})
		}
		r, err := handle(context.Background(), req)
		if err != nil {
			r = Reply{"error": err.Error()}
		}
		r["id"] = req.ID
		if err := enc.Encode(r); err != nil {
			return false, err
		}
	}
	return false, lines.Err()
}

// Main runs Serve on stdin and stdout and exits: 0 once stdin closes.
func Main(setUp func(Hello) (Handler, []string, map[string][]string, error)) {
	if err := Serve(os.Stdin, os.Stdout, setUp); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

func contains(vs []int, v int) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// TokenDocumented is what a token lock on one server earns, by fault (stockbench's
// built-in token design): safe while holders are alive and quick, a late write
// (OVERSOLD, LOST) whenever the lease runs out under a holder that then writes, and
// under an eviction a second holder's write that may land first (LOCK-BROKEN). A
// deploy's SIGTERM stops a Go program at once: a dead holder. Each call is a fresh map,
// for an adapter to change where its library differs.
func TokenDocumented() map[string][]string {
	d := map[string][]string{"evict": {"OVERSOLD", "LOST", "LOCK-BROKEN"}}
	for _, f := range []string{"none", "crash-acquire", "crash-holder", "term-holder", "net-latency"} {
		d[f] = []string{"SAFE"}
	}
	for _, f := range []string{"slow-work", "cpu-starve", "client-pause", "redis-pause", "redis-restart", "failover", "clock-jump", "net-timeout", "rolling-restart", "server-errors",
		"app-pause", "app-blackhole"} {
		d[f] = []string{"OVERSOLD", "LOST"}
	}
	return d
}

// TokenToldDocumented is what a token lock on one server earns when its holders ask
// their library right before each write whether they still hold it, and the library
// asks Redis (the key still holds the holder's token): safe while holders are alive
// and quick; where the key goes from under a live holder (its lease outlived, the
// server paused, restarted, failed over, its clock jumped, the key evicted, a network
// that carries nothing past the TTL) the next holder gets in while the first still
// holds in its own view, but the first is told no and does not write (OVERLAP), or was
// told yes before the key went inside its lease (LOCK-BROKEN): nothing is lost or
// oversold. Each call is a fresh map.
func TokenToldDocumented() map[string][]string {
	d := map[string][]string{}
	for _, f := range []string{"none", "crash-acquire", "crash-holder", "term-holder", "net-latency"} {
		d[f] = []string{"SAFE"}
	}
	for _, f := range []string{"slow-work", "cpu-starve", "client-pause", "redis-pause", "server-errors", "net-timeout", "app-pause", "app-blackhole"} {
		d[f] = []string{"OVERLAP"}
	}
	for _, f := range []string{"redis-restart", "rolling-restart", "failover", "clock-jump", "evict"} {
		d[f] = []string{"OVERLAP", "LOCK-BROKEN"}
	}
	return d
}
