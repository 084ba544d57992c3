package lockserver

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/clock"
	"github.com/netlock-go/netlock/internal/udpbatch"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peer is a raw UDP endpoint speaking the wire protocol, for driving a server in tests.
type peer struct {
	t    *testing.T
	conn *net.UDPConn
	srv  netip.AddrPort
}

func newPeer(t *testing.T, srv netip.AddrPort) *peer {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &peer{t: t, conn: c, srv: srv}
}

func (p *peer) addr() netip.AddrPort { return p.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

func (p *peer) send(f wire.Fields) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(wire.Append(nil, &f), p.srv); err != nil {
		p.t.Fatal(err)
	}
}

// testKey is the rack key of the tests' servers (trusted).
const testKey wire.Key = 0x6e65746c6f636b21

// trusted configures cfg with testKey and every loopback address as switch, controller and RDMA
// node: the tests' raw peers may then send control messages with sendControl.
func trusted(cfg Config) Config {
	cfg.RackKey = testKey
	lo := []string{"127.0.0.0/8"}
	cfg.Peers = Peers{Switches: lo, Controllers: lo, RDMANodes: lo}
	return cfg
}

// sendControl sends f with the rack key testKey in its trailer.
func (p *peer) sendControl(f wire.Fields) { p.sendKeyed(f, uint64(testKey)) }

// sendKeyed sends f with key in its trailer.
func (p *peer) sendKeyed(f wire.Fields, key uint64) {
	p.t.Helper()
	b := append(wire.Append(nil, &f), make([]byte, wire.AuthLen)...)
	wire.SetRackKey(b, key)
	p.sendRaw(b)
}

// recvRaw waits up to d for one datagram and returns its bytes.
func (p *peer) recvRaw(d time.Duration) ([]byte, bool) {
	p.t.Helper()
	buf := make([]byte, 256)
	_ = p.conn.SetReadDeadline(time.Now().Add(d))
	n, _, err := p.conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		return nil, false
	}
	return buf[:n], true
}

func (p *peer) sendRaw(b []byte) {
	p.t.Helper()
	if _, err := p.conn.WriteToUDPAddrPort(b, p.srv); err != nil {
		p.t.Fatal(err)
	}
}

// recv waits up to d for one message; ok is false on timeout.
func (p *peer) recv(d time.Duration) (wire.Fields, bool) {
	p.t.Helper()
	buf := make([]byte, 256)
	_ = p.conn.SetReadDeadline(time.Now().Add(d))
	n, _, err := p.conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		return wire.Fields{}, false
	}
	h, err := wire.Parse(buf[:n])
	if err != nil {
		p.t.Fatalf("server sent a malformed packet: %v", err)
	}
	var f wire.Fields
	h.Decode(&f)
	return f, true
}

func (p *peer) expect(op wire.Op, txn uint64) wire.Fields {
	p.t.Helper()
	f, ok := p.recv(5 * time.Second)
	if !ok {
		p.t.Fatalf("no %s for txn %d", op, txn)
	}
	if f.Op != op || f.Txn != txn {
		p.t.Fatalf("got %s, want %s txn=%d", f.String(), op, txn)
	}
	return f
}

func (p *peer) expectNothing(d time.Duration) {
	p.t.Helper()
	if f, ok := p.recv(d); ok {
		p.t.Fatalf("unexpected %s", f.String())
	}
}

func startServer(t *testing.T, cfg Config) (*Server, func()) {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	stop := func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	}
	return s, stop
}

func TestAcquireReleaseOverUDP(t *testing.T) {
	for _, shards := range []int{1, 2, 4} {
		t.Run(strings.Repeat("s", shards), func(t *testing.T) {
			s, stop := startServer(t, Config{Shards: shards})
			defer stop()
			a, b := newPeer(t, s.Addr()), newPeer(t, s.Addr())
			a.send(wire.Fields{Op: wire.OpAcquire, Lock: 42, Txn: 1, Mode: wire.Exclusive, Timestamp: 99})
			g := a.expect(wire.OpGrant, 1)
			if g.Token == 0 || g.Timestamp != 99 || g.LeaseMicros == 0 {
				t.Fatalf("grant %s: want token, echoed timestamp and lease", g.String())
			}
			b.send(wire.Fields{Op: wire.OpAcquire, Lock: 42, Txn: 2, Mode: wire.Shared})
			b.expectNothing(50 * time.Millisecond)
			a.send(wire.Fields{Op: wire.OpRelease, Lock: 42, Txn: 1, Token: g.Token})
			ack := a.expect(wire.OpRelease, 1)
			if ack.Flags&wire.FlagReply == 0 {
				t.Fatalf("release answer %s lacks the reply flag", ack.String())
			}
			g2 := b.expect(wire.OpGrant, 2)
			if g2.Token <= g.Token {
				t.Fatalf("fencing token went from %d to %d", g.Token, g2.Token)
			}
			// Locks on other shards are independent.
			for lock := uint32(100); lock < 108; lock++ {
				a.send(wire.Fields{Op: wire.OpAcquire, Lock: lock, Txn: 7, Mode: wire.Exclusive})
				a.expect(wire.OpGrant, 7)
			}
		})
	}
}

func TestMalformedCountedAndDropped(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, stop := startServer(t, Config{Shards: 1, Registerer: reg})
	defer stop()
	p := newPeer(t, s.Addr())
	good := wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1})
	p.sendRaw(good[:10])
	bad := append([]byte(nil), good...)
	bad[0] = 9
	p.sendRaw(bad)
	bad = append([]byte(nil), good...)
	bad[1] = 200
	p.sendRaw(bad)
	bad = append([]byte(nil), good...)
	bad[2] = 7
	p.sendRaw(bad)
	p.send(wire.Fields{Op: wire.OpGrant, Lock: 1, Txn: 1})
	// The server still works, and answers only the good packet.
	p.sendRaw(append(good, "trailing payload"...))
	p.expect(wire.OpGrant, 1)
	p.expectNothing(50 * time.Millisecond)
	m := s.Malformed()
	for _, r := range []string{"short", "version", "op", "mode", "unexpected"} {
		if m[r] != 1 {
			t.Errorf("malformed[%s] = %d, want 1 (all: %v)", r, m[r], m)
		}
	}
	if n := metricValue(t, reg, "netlock_malformed_packets_total", "short"); n != 1 {
		t.Errorf("metric netlock_malformed_packets_total{reason=short} = %v", n)
	}
	if n := metricValue(t, reg, "netlock_requests_total", "acquire"); n != 1 {
		t.Errorf("metric netlock_requests_total{op=acquire} = %v", n)
	}
}

// metricValue returns the value of the series of a gathered counter family with a label value.
func metricValue(t *testing.T, reg *prometheus.Registry, name, label string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	t.Fatalf("metric %s{%s} not found", name, label)
	return 0
}

func TestLeaseExpiryGrantsOnward(t *testing.T) {
	s, stop := startServer(t, Config{Shards: 2, SweepInterval: time.Millisecond,
		Core: lockcore.Config{DefaultLease: 30 * time.Millisecond}})
	defer stop()
	dead, next := newPeer(t, s.Addr()), newPeer(t, s.Addr())
	dead.send(wire.Fields{Op: wire.OpAcquire, Lock: 5, Txn: 1, Mode: wire.Exclusive})
	g := dead.expect(wire.OpGrant, 1)
	next.send(wire.Fields{Op: wire.OpAcquire, Lock: 5, Txn: 2, Mode: wire.Exclusive})
	// The first holder never releases: after its lease the next one is granted.
	next.expect(wire.OpGrant, 2)
	r := dead.expect(wire.OpReject, 1)
	if r.Status != wire.StatusLeaseExpired || r.Token != g.Token {
		t.Fatalf("old holder told %s, want lease-expired for token %d", r.String(), g.Token)
	}
	if st := s.Stats(); st.Expired != 1 {
		t.Fatalf("expired = %d, want 1", st.Expired)
	}
}

// TestShutdownRejectsWaiters: a graceful shutdown rejects the waiters and tells the holders.
func TestShutdownRejectsWaiters(t *testing.T) {
	s, stop := startServer(t, Config{Shards: 2})
	a, b := newPeer(t, s.Addr()), newPeer(t, s.Addr())
	a.send(wire.Fields{Op: wire.OpAcquire, Lock: 3, Txn: 1, Mode: wire.Exclusive})
	a.expect(wire.OpGrant, 1)
	b.send(wire.Fields{Op: wire.OpAcquire, Lock: 3, Txn: 2, Mode: wire.Exclusive})
	b.expectNothing(50 * time.Millisecond)
	stop()
	r := b.expect(wire.OpReject, 2)
	if r.Status != wire.StatusShutdown {
		t.Fatalf("waiter told %s, want status shutdown", r.String())
	}
	// The holder is told that its lease will not be renewed (its token names the grant).
	if r := a.expect(wire.OpReject, 1); r.Status != wire.StatusShutdown || r.Token == 0 {
		t.Fatalf("holder told %s, want status shutdown with its token", r.String())
	}
}

func TestTakeoverGrace(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	s, stop := startServer(t, Config{Shards: 1, TakeoverGrace: time.Second, Clock: clk})
	defer stop()
	p := newPeer(t, s.Addr())
	p.send(wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1, Mode: wire.Exclusive})
	p.expectNothing(30 * time.Millisecond)
	clk.Advance(999 * time.Millisecond)
	p.expectNothing(30 * time.Millisecond)
	// The grace period ends: the sweeper's next run grants the queued request.
	clk.Advance(time.Millisecond)
	p.expect(wire.OpGrant, 1)
}

func TestOverflowPushBack(t *testing.T) {
	s, stop := startServer(t, trusted(Config{Shards: 2}))
	defer stop()
	sw, client := newPeer(t, s.Addr()), newPeer(t, s.Addr())
	for txn := uint64(1); txn <= 3; txn++ {
		sw.sendControl(wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Lock: 9, Txn: txn,
			Mode: wire.Exclusive, Client: client.addr()})
	}
	sw.expectNothing(30 * time.Millisecond)
	sw.sendControl(wire.Fields{Op: wire.OpQueueEmpty, Lock: 9, Slots: 2})
	for txn := uint64(1); txn <= 2; txn++ {
		pb := sw.expect(wire.OpPushBack, txn)
		if pb.Client != client.addr() {
			t.Fatalf("push-back carries client %v, want %v", pb.Client, client.addr())
		}
	}
	sw.expectNothing(30 * time.Millisecond)
	client.expectNothing(10 * time.Millisecond)
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		err  string
	}{
		{"defaults", Config{}, ""},
		{"shards", Config{Shards: -1}, "shards"},
		{"batch", Config{Batch: 5000}, "batch"},
		{"listen", Config{Listen: "nonsense:port:x"}, "listen"},
		{"core", Config{Listen: "127.0.0.1:0", Core: lockcore.Config{Priorities: 99}}, "priorities"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "defaults" {
				c := tc.cfg
				if err := c.validate(); err != nil || c.Shards == 0 || c.Listen == "" {
					t.Fatalf("validate: %v %+v", err, c)
				}
				return
			}
			s, err := New(tc.cfg)
			if err == nil {
				s.closeConns()
				t.Fatalf("New accepted %+v", tc.cfg)
			}
			if !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %q does not mention %q", err, tc.err)
			}
		})
	}
}

// TestPortInUse: a server does not share its address with another server, whatever their reader
// counts (two servers with several readers each used to share the port as one SO_REUSEPORT group
// and both granted the same locks: issue 18).
func TestPortInUse(t *testing.T) {
	for _, pair := range [][2]int{{1, 1}, {1, 2}, {2, 1}, {2, 2}, {4, 3}} {
		a, err := New(Config{Listen: "127.0.0.1:0", Shards: 2, Sockets: pair[0]})
		if err != nil {
			t.Fatal(err)
		}
		if b, err := New(Config{Listen: a.Addr().String(), Shards: 2, Sockets: pair[1]}); !errors.Is(err, udpbatch.ErrAddrInUse) {
			if err == nil {
				b.closeConns()
			}
			t.Errorf("server with %d readers on the address of a server with %d: %v, want ErrAddrInUse", pair[1], pair[0], err)
		}
		a.closeConns()
	}
}

// TestIdleStatesFreedBySweeper: overflow-only traffic leaves no lease to expire, yet the sweeper
// frees the idle lock states once the idle retention has passed (they used to stay until some
// lease deadline passed, possibly never, while the locks gauge read 0).
func TestIdleStatesFreedBySweeper(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	s, stop := startServer(t, trusted(Config{Shards: 2, Clock: clk,
		Core: lockcore.Config{IdleRetention: 100 * time.Millisecond}}))
	defer stop()
	sw, client := newPeer(t, s.Addr()), newPeer(t, s.Addr())
	const n = 500
	for i := uint32(0); i < n; i++ {
		sw.sendControl(wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Lock: i, Txn: 1,
			Mode: wire.Exclusive, Client: client.addr()})
		sw.sendControl(wire.Fields{Op: wire.OpQueueEmpty, Lock: i, Slots: 1})
		sw.expect(wire.OpPushBack, 1)
	}
	if st := s.Stats(); st.Locks != 0 || st.Idle != n {
		t.Fatalf("after the traffic: locks %d idle %d, want 0 and %d", st.Locks, st.Idle, n)
	}
	clk.Advance(100 * time.Millisecond)
	eventuallyT(t, "idle states freed", func() bool { return s.Stats().Idle == 0 })
}
