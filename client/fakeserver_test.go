package client

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// fakeServer is a minimal lock server for the client's tests, following docs/protocol.md for one
// priority level: FIFO shared/exclusive queues, grants with tokens and leases, releases that
// withdraw waiters, idempotent acquires, try, lease probes and lease expiry.
// It has no replay memory (a late copy of a released acquire queues again), so tests of lossy or
// reordering links run against the real lock server instead (lockserver_test.go); this one serves
// the tests that script a server's answers.
type fakeServer struct {
	conn net.PacketConn

	mu     sync.Mutex
	locks  map[uint32][]*fakeReq // guarded by mu: holders first, then waiters, in order
	token  uint64                // guarded by mu
	lease  time.Duration         // default lease
	reject wire.Status           // if non-zero, every acquire is rejected with it
	// dropIn, if set, is called for each request; returning true drops it.
	dropIn func(f *wire.Fields) bool
	// dropOut, if set, is called for each answer; returning true drops it.
	dropOut func(f *wire.Fields) bool
	reqs    []wire.Fields // every request received, in order

	done chan struct{}
	wg   sync.WaitGroup
}

type fakeReq struct {
	txn     uint64
	mode    wire.Mode
	ts      uint64
	lease   time.Duration
	to      net.Addr
	granted bool
	token   uint64
	expires time.Time
}

func newFakeServer(t testing.TB, lease time.Duration) *fakeServer {
	t.Helper()
	s, err := startFake(lease)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.close)
	return s
}

// startFake starts a fake server on a loopback port; stop it with close.
func startFake(lease time.Duration) (*fakeServer, error) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &fakeServer{conn: conn, locks: make(map[uint32][]*fakeReq), lease: lease, token: 100,
		done: make(chan struct{})}
	s.wg.Add(2)
	go s.serve()
	go s.expire()
	return s, nil
}

func (s *fakeServer) addr() string { return s.conn.LocalAddr().String() }

func (s *fakeServer) close() {
	select {
	case <-s.done:
		return
	default:
	}
	close(s.done)
	s.conn.Close()
	s.wg.Wait()
}

func (s *fakeServer) set(f func(s *fakeServer)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

func (s *fakeServer) requests() []wire.Fields {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wire.Fields(nil), s.reqs...)
}

// queue returns the txns queued on lock (holders first) and how many of them hold it.
func (s *fakeServer) queue(lock uint32) (txns []uint64, holders int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.locks[lock] {
		txns = append(txns, r.txn)
		if r.granted {
			holders++
		}
	}
	return txns, holders
}

func (s *fakeServer) serve() {
	defer s.wg.Done()
	buf := make([]byte, 2048)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		h, err := wire.Parse(buf[:n])
		if err != nil {
			continue
		}
		var f wire.Fields
		h.Decode(&f)
		s.mu.Lock()
		s.reqs = append(s.reqs, f)
		if s.dropIn != nil && s.dropIn(&f) {
			s.mu.Unlock()
			continue
		}
		out := s.handle(&f, from)
		s.mu.Unlock()
		s.sendAll(out)
	}
}

type fakeOut struct {
	to net.Addr
	f  wire.Fields
}

func (s *fakeServer) sendAll(out []fakeOut) {
	for _, o := range out {
		s.mu.Lock()
		drop := s.dropOut != nil && s.dropOut(&o.f)
		s.mu.Unlock()
		if drop {
			continue
		}
		b := wire.Append(nil, &o.f)
		_, _ = s.conn.WriteTo(b, o.to)
	}
}

// handle processes one request. Precondition: s.mu is held.
func (s *fakeServer) handle(f *wire.Fields, from net.Addr) []fakeOut {
	reply := func(op wire.Op, st wire.Status, fl wire.Flags) fakeOut {
		r := *f
		r.Op, r.Status, r.Flags = op, st, fl
		return fakeOut{from, r}
	}
	q := s.locks[f.Lock]
	idx := -1
	for i, r := range q {
		if r.txn == f.Txn {
			idx = i
		}
	}
	switch f.Op {
	case wire.OpAcquire:
		if idx >= 0 {
			if r := q[idx]; r.granted {
				return []fakeOut{s.grantMsg(f.Lock, r)}
			}
			return nil
		}
		if s.reject != 0 {
			return []fakeOut{reply(wire.OpReject, s.reject, 0)}
		}
		lease := s.lease
		if f.LeaseMicros != 0 {
			lease = time.Duration(f.LeaseMicros) * time.Microsecond
		}
		r := &fakeReq{txn: f.Txn, mode: f.Mode, ts: f.Timestamp, lease: lease, to: from}
		s.locks[f.Lock] = append(q, r)
		out := s.advance(f.Lock)
		if f.Flags&wire.FlagTry != 0 && !r.granted {
			s.remove(f.Lock, r)
			return []fakeOut{reply(wire.OpReject, wire.StatusWouldBlock, 0)}
		}
		return out
	case wire.OpRelease:
		if idx >= 0 {
			r := q[idx]
			if (r.granted && r.token == f.Token) || (!r.granted && f.Token == 0) {
				s.remove(f.Lock, r)
				return append([]fakeOut{reply(wire.OpRelease, 0, wire.FlagReply)}, s.advance(f.Lock)...)
			}
		}
		return []fakeOut{reply(wire.OpReject, wire.StatusNotHolder, 0)}
	case wire.OpLeaseProbe:
		if idx >= 0 && q[idx].granted && q[idx].token == f.Token {
			r := q[idx]
			if f.LeaseMicros != 0 {
				r.lease = time.Duration(f.LeaseMicros) * time.Microsecond
			}
			r.expires = time.Now().Add(r.lease)
			o := reply(wire.OpLeaseProbe, 0, wire.FlagReply)
			o.f.LeaseMicros = uint32(r.lease / time.Microsecond)
			return []fakeOut{o}
		}
		return []fakeOut{reply(wire.OpReject, wire.StatusNotHolder, 0)}
	}
	return nil
}

func (s *fakeServer) grantMsg(lock uint32, r *fakeReq) fakeOut {
	return fakeOut{r.to, wire.Fields{Op: wire.OpGrant, Mode: r.mode, Lock: lock, Txn: r.txn, Token: r.token,
		Timestamp: r.ts, LeaseMicros: uint32(r.lease / time.Microsecond)}}
}

func (s *fakeServer) remove(lock uint32, r *fakeReq) {
	q := s.locks[lock]
	for i, x := range q {
		if x == r {
			s.locks[lock] = append(q[:i:i], q[i+1:]...)
			return
		}
	}
}

// advance grants waiters in order while they are compatible. Precondition: s.mu is held.
func (s *fakeServer) advance(lock uint32) []fakeOut {
	var out []fakeOut
	q := s.locks[lock]
	for i, r := range q {
		if r.granted {
			continue
		}
		ok := i == 0
		if r.mode == wire.Shared {
			ok = true
			for _, p := range q[:i] {
				if p.mode == wire.Exclusive {
					ok = false
				}
			}
		}
		if !ok {
			break
		}
		s.token++
		r.granted, r.token, r.expires = true, s.token, time.Now().Add(r.lease)
		out = append(out, s.grantMsg(lock, r))
	}
	return out
}

func (s *fakeServer) expire() {
	defer s.wg.Done()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		var out []fakeOut
		now := time.Now()
		s.mu.Lock()
		for lock, q := range s.locks {
			for _, r := range q {
				if r.granted && now.After(r.expires) {
					s.remove(lock, r)
					out = append(out, fakeOut{r.to, wire.Fields{Op: wire.OpReject, Status: wire.StatusLeaseExpired,
						Mode: r.mode, Lock: lock, Txn: r.txn, Token: r.token, Timestamp: r.ts}})
					out = append(out, s.advance(lock)...)
				}
			}
		}
		s.mu.Unlock()
		s.sendAll(out)
	}
}
