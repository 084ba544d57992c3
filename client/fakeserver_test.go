package client

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/wire"
)

// fakeServer is the lock server of the client's tests: the real server core (srvcore, with
// lockcore's rules: queues, grants, tokens, leases, replay memory, lease expiry) behind a
// loopback socket of its own, with what a test scripts around it: requests or answers lost
// (dropIn, dropOut), every acquire refused with one status (reject), the server's state lost
// (forget), a grant sent again (regrant). The rules are the core's; the script only decides
// which datagrams reach it and leave it.
type fakeServer struct {
	conn  net.PacketConn
	lease time.Duration
	start time.Time

	mu     sync.Mutex
	core   *srvcore.Core                     // guarded by mu (replaced by forget)
	reject wire.Status                       // if non-zero, every acquire is refused with it
	grants map[uint32]map[uint64]wire.Fields // guarded by mu: the last grant sent, by lock and txn
	// dropIn, if set, is called for each request; returning true drops it.
	dropIn func(f *wire.Fields) bool
	// dropOut, if set, is called for each answer; returning true drops it.
	dropOut func(f *wire.Fields) bool
	reqs    []wire.Fields // every request received, in order
	runs    uint32

	done chan struct{}
	wg   sync.WaitGroup
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

// startFake starts a fake server with default lease lease on a loopback port; stop it with
// close.
func startFake(lease time.Duration) (*fakeServer, error) {
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &fakeServer{conn: conn, lease: lease, start: time.Now(), grants: map[uint32]map[uint64]wire.Fields{},
		done: make(chan struct{})}
	if err := s.newCore(); err != nil {
		conn.Close()
		return nil, err
	}
	s.wg.Add(2)
	go s.serve()
	go s.tick()
	return s, nil
}

// newCore starts a run of the server core with no state. Precondition: s.mu is held or s is
// not shared yet.
func (s *fakeServer) newCore() error {
	s.runs++
	c, err := srvcore.New(srvcore.Config{Shards: 1, Instance: s.runs, Start: s.now(),
		Core: lockcore.Config{DefaultLease: s.lease, MaxLease: max(s.lease, time.Hour)}})
	if err != nil {
		return err
	}
	s.core = c
	return nil
}

func (s *fakeServer) now() int64 { return int64(time.Since(s.start)) }

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

// forget makes the server lose every lock's state, as a restart that kept nothing would: its
// holders' releases and renewals are then refused (not-holder) by the core.
func (s *fakeServer) forget() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants = map[uint32]map[uint64]wire.Fields{}
	return s.newCore()
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
	info, ok := s.core.Inspect(lock)
	if !ok {
		return nil, 0
	}
	for _, e := range info.Holders {
		txns = append(txns, e.Txn)
	}
	for _, e := range info.Waiters {
		txns = append(txns, e.Txn)
	}
	return txns, len(info.Holders)
}

// regrant sends the grant of lock's first holder again (as a late duplicate would arrive) and
// returns its token; 0 if lock has no holder the server sent a grant to.
func (s *fakeServer) regrant(lock uint32) uint64 {
	s.mu.Lock()
	info, ok := s.core.Inspect(lock)
	var g wire.Fields
	var to netip.AddrPort
	if ok && len(info.Holders) > 0 {
		g, to = s.grants[lock][info.Holders[0].Txn], info.Holders[0].To
	}
	s.mu.Unlock()
	if g.Token == 0 {
		return 0
	}
	s.sendAll([]lockcore.Effect{{To: to, Msg: g}})
	return g.Token
}

func (s *fakeServer) serve() {
	defer s.wg.Done()
	buf := make([]byte, 2048)
	var out srvcore.Out
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
		ap := from.(*net.UDPAddr).AddrPort()
		s.mu.Lock()
		s.reqs = append(s.reqs, f)
		if s.dropIn != nil && s.dropIn(&f) {
			s.mu.Unlock()
			continue
		}
		out.Reset()
		if f.Op == wire.OpAcquire && s.reject != 0 {
			r := f
			r.Op, r.Status, r.Flags = wire.OpReject, s.reject, 0
			out.Sends = append(out.Sends, lockcore.Effect{To: ap, Msg: r})
		} else {
			s.core.Handle(s.now(), buf[:n], ap, &out)
			s.persisted(&out)
		}
		s.mu.Unlock()
		s.sendAll(out.Sends)
	}
}

// tick runs the core's timers (lease expiry, waiters' leases).
func (s *fakeServer) tick() {
	defer s.wg.Done()
	t := time.NewTicker(2 * time.Millisecond)
	defer t.Stop()
	var out srvcore.Out
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		out.Reset()
		s.mu.Lock()
		s.core.Tick(s.now(), &out)
		s.persisted(&out)
		s.mu.Unlock()
		s.sendAll(out.Sends)
	}
}

// persisted acknowledges at once a token epoch the core asks to persist (a server whose
// storage never fails). Precondition: s.mu is held.
func (s *fakeServer) persisted(out *srvcore.Out) {
	for e := out.Persist; e != 0; {
		out.Persist = 0
		s.core.Persisted(s.now(), e, out)
		e = out.Persist
	}
}

func (s *fakeServer) sendAll(out []lockcore.Effect) {
	for _, o := range out {
		s.mu.Lock()
		if o.Msg.Op == wire.OpGrant {
			if s.grants[o.Msg.Lock] == nil {
				s.grants[o.Msg.Lock] = map[uint64]wire.Fields{}
			}
			s.grants[o.Msg.Lock][o.Msg.Txn] = o.Msg
		}
		drop := s.dropOut != nil && s.dropOut(&o.Msg)
		s.mu.Unlock()
		if drop {
			continue
		}
		b := wire.Append(nil, &o.Msg)
		_, _ = s.conn.WriteTo(b, net.UDPAddrFromAddrPort(o.To))
	}
}
