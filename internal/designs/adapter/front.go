package adapter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// front is where an adapter's processes dial Redis: a listener on loopback whose every
// connection goes on through the dialer of the harness's own client of the server. So
// the faults that act on the harness's connections act on the adapter's too: the
// network faults' proxy is on that dialer's way, a restarted server or a failover's new
// master is where it dials next, and the connections a move closes are closed on the
// adapter's side as well (the dialer tracks them), as a sentinel-aware client's are.
type front struct {
	ln   net.Listener
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
	to   string // the address the dialer is given

	mu     sync.Mutex
	open   map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// dialTimeout bounds a dial the front makes for one of the adapter's connections: a
// restarting server's dial waits until it is back, as the harness's do.
const dialTimeout = 30 * time.Second

// newFront listens on loopback for the server c reaches. It returns nil, and no error,
// for a client it cannot stand in front of (a cluster client: the adapter dials the
// cluster's nodes itself).
func newFront(c redis.UniversalClient) (*front, error) {
	cl, ok := c.(*redis.Client)
	if !ok {
		return nil, nil
	}
	o := cl.Options()
	if o.Dialer == nil {
		return nil, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("adapter front: listen: %w", err)
	}
	f := &front{ln: ln, dial: o.Dialer, to: o.Addr, open: map[net.Conn]struct{}{}}
	f.wg.Go(f.accept)
	return f, nil
}

// Addr is the address the adapter dials.
func (f *front) Addr() string { return f.ln.Addr().String() }

func (f *front) accept() {
	for {
		down, err := f.ln.Accept()
		if err != nil {
			return // closed
		}
		if !f.track(down) {
			down.Close()
			return
		}
		f.wg.Go(func() { f.serve(down) })
	}
}

// serve joins down, the adapter's connection, to a connection of the dialer's, until
// either side ends; then both end.
func (f *front) serve(down net.Conn) {
	defer f.untrack(down)
	ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
	up, err := f.dial(ctx, "tcp", f.to)
	cancel()
	if err != nil {
		return // the adapter's client sees its connection closed, as a refused dial
	}
	if !f.track(up) {
		up.Close()
		return
	}
	defer f.untrack(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		// Either side ending ends both: a connection the harness's dialer closed (a
		// failover) is closed under the adapter's client too.
		dst.Close()
		src.Close()
		done <- struct{}{}
	}
	go pipe(up, down)
	go pipe(down, up)
	<-done
	<-done
}

func (f *front) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.open[c] = struct{}{}
	return true
}

func (f *front) untrack(c net.Conn) {
	c.Close()
	f.mu.Lock()
	delete(f.open, c)
	f.mu.Unlock()
}

// close stops listening and closes every connection, once the adapter's processes are
// gone.
func (f *front) close() error {
	f.mu.Lock()
	f.closed = true
	for c := range f.open {
		c.Close()
	}
	f.mu.Unlock()
	err := f.ln.Close()
	f.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
