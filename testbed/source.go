package testbed

import (
	"net"
	"sync"

	"github.com/netlock-go/netlock/wire"
)

// Source says who granted an acquisition.
type Source uint8

// Sources. SourceUnknown: the client returned a grant whose datagram the tracker did not see (it
// should not happen; the demo counts it apart instead of guessing).
const (
	SourceUnknown Source = iota
	SourceSwitch
	SourceServer
)

// serverSent is the set of (lock, txn) the lock servers sent a grant for: it sits on every
// server's socket (softrack.Config.WrapServer) and records each grant before it is written. The
// switch answers from the lock's server address (docs/dataplane.md, "Answers' source"), so the
// source address of a grant does not say who granted it; what the servers sent does.
type serverSent struct {
	mu   sync.Mutex
	sent map[grantKey]struct{} // guarded by mu
}

type grantKey struct {
	lock uint32
	txn  uint64
}

func newServerSent() *serverSent { return &serverSent{sent: make(map[grantKey]struct{})} }

// observe records b if it is a grant.
func (s *serverSent) observe(b []byte) {
	h, err := wire.Parse(b)
	if err != nil || h.Op() != wire.OpGrant {
		return
	}
	s.mu.Lock()
	s.sent[grantKey{h.Lock(), h.Txn()}] = struct{}{}
	s.mu.Unlock()
}

// take reports whether a server sent a grant of k, and forgets it.
func (s *serverSent) take(k grantKey) bool {
	s.mu.Lock()
	_, ok := s.sent[k]
	delete(s.sent, k)
	s.mu.Unlock()
	return ok
}

// wrap returns a softrack.Config.WrapServer: the server's connection, observed.
func (s *serverSent) wrap(_ uint16, c net.PacketConn) net.PacketConn {
	return &serverConn{PacketConn: c, s: s}
}

type serverConn struct {
	net.PacketConn
	s *serverSent
}

func (c *serverConn) WriteTo(p []byte, to net.Addr) (int, error) {
	c.s.observe(p)
	return c.PacketConn.WriteTo(p, to)
}

// sourceTracker watches the datagrams a client reads and, at the first grant of each (lock, txn),
// decides who granted it: a server if one sent a grant of it (serverSent), else the switch. The
// worker takes the source of each of its grants once the transaction holds them (take) and
// forgets the acquisitions that failed (forget), so the map holds only acquisitions in flight.
//
// It sits on the client's socket (client.Config.WrapConn) and reads what the client reads; it
// never changes a datagram.
type sourceTracker struct {
	servers *serverSent

	mu   sync.Mutex
	seen map[grantKey]Source // guarded by mu
}

func newSourceTracker(servers *serverSent) *sourceTracker {
	return &sourceTracker{servers: servers, seen: make(map[grantKey]Source)}
}

// observe records b, read by the client, if it is a grant.
func (s *sourceTracker) observe(b []byte) {
	h, err := wire.Parse(b)
	if err != nil || h.Op() != wire.OpGrant {
		return
	}
	k := grantKey{h.Lock(), h.Txn()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.seen[k]; ok {
		return
	}
	src := SourceSwitch
	if s.servers.take(k) {
		src = SourceServer
	}
	s.seen[k] = src
}

// take returns and forgets the source of the grant of (lock, txn).
func (s *sourceTracker) take(lock uint32, txn uint64) Source {
	k := grantKey{lock, txn}
	s.mu.Lock()
	src := s.seen[k]
	delete(s.seen, k)
	s.mu.Unlock()
	return src
}

// forget drops what is known of (lock, txn).
func (s *sourceTracker) forget(lock uint32, txn uint64) {
	s.mu.Lock()
	delete(s.seen, grantKey{lock, txn})
	s.mu.Unlock()
}

// wrap returns a WrapConn for a client: the connection it is given, observed.
func (s *sourceTracker) wrap(c net.PacketConn) net.PacketConn {
	return &observedConn{PacketConn: c, s: s}
}

type observedConn struct {
	net.PacketConn
	s *sourceTracker
}

func (c *observedConn) ReadFrom(p []byte) (int, net.Addr, error) {
	n, from, err := c.PacketConn.ReadFrom(p)
	if err == nil {
		c.s.observe(p[:n])
	}
	return n, from, err
}
