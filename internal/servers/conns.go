package servers

import (
	"errors"
	"net"
	"sync"
	"syscall"
)

// connSet holds the open connections of a target's clients.
type connSet struct {
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

type trackedConn struct {
	net.Conn
	set *connSet
}

func (s *connSet) track(c net.Conn) net.Conn {
	tc := &trackedConn{Conn: c, set: s}
	s.mu.Lock()
	if s.conns == nil {
		s.conns = make(map[*trackedConn]struct{})
	}
	s.conns[tc] = struct{}{}
	s.mu.Unlock()
	return tc
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.conns, c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// SyscallConn lets go-redis check a connection as its pool hands it out, as it checks
// a plain TCP connection: one that closeAll closed (a restart, a redirect) is dropped
// and dialled again, not written to ("use of closed network connection").
func (c *trackedConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// closeAll closes every open connection; their clients see errors and dial again.
func (s *connSet) closeAll() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}
