package lockserver

import (
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/clock"

	"github.com/netlock-go/netlock/wire"
)

// recvBody waits for one datagram of up to 2 KiB and returns its header and what follows the
// rack key trailer.
func (p *peer) recvBody(d time.Duration) (wire.Fields, []byte) {
	p.t.Helper()
	buf := make([]byte, 2048)
	_ = p.conn.SetReadDeadline(time.Now().Add(d))
	n, _, err := p.conn.ReadFromUDPAddrPort(buf)
	if err != nil {
		p.t.Fatalf("no datagram: %v", err)
	}
	h, err := wire.Parse(buf[:n])
	if err != nil {
		p.t.Fatal(err)
	}
	var f wire.Fields
	h.Decode(&f)
	if k, ok := wire.RackKey(buf[:n]); !ok || k != uint64(testKey) {
		p.t.Fatalf("%s without the rack key", f.String())
	}
	return f, buf[wire.ControlLen:n]
}

// TestPlacementOps drives the control plane's sub-operations over UDP: yield (new direct acquires
// dropped, the own queue served), the term fence, the reserved-lock barrier echo, residents,
// stats, adopt (q2 into the queue, above a token floor that moves the epoch).
func TestPlacementOps(t *testing.T) {
	s, stop, tp := startWithPeers(t, Config{Shards: 2, RackKey: testKey})
	defer stop()
	ctl, sw := tp.ctl, tp.sw
	c1, c2, c3 := newPeer(t, s.Addr()), newPeer(t, s.Addr()), newPeer(t, s.Addr())
	c1.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 5, Txn: 1, Slots: 4})
	g1 := c1.expect(wire.OpGrant, 1)

	ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminYield, Lock: 5, Txn: 100, Timestamp: 3})
	if f, _ := ctl.recvBody(5 * time.Second); f.Status != wire.AdminYield || f.Priority != 1 || f.LeaseMicros != 1 ||
		f.Token < g1.Token || f.Timestamp != 3 {
		t.Fatalf("yield reply %s", f.String())
	}
	c2.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 5, Txn: 2})
	c2.expectNothing(30 * time.Millisecond)
	eventuallyT(t, "the direct acquire dropped", func() bool { return s.Stats().ResidentDropped == 1 })
	// A request of an older term is refused.
	ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminAdopt, Lock: 5, Txn: 101, Timestamp: 2})
	if f := ctl.expect(wire.OpReject, 101); f.Status != wire.StatusNotOwner {
		t.Fatalf("stale term: %s", f.String())
	}
	c1.send(wire.Fields{Op: wire.OpRelease, Lock: 5, Txn: 1, Token: g1.Token})
	c1.expect(wire.OpRelease, 1)
	sw.sendControl(wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Mode: wire.Exclusive, Lock: 5, Txn: 3,
		Client: c3.addr()})
	// The barrier: a queue-empty of a reserved lock comes back as a push-back without a request.
	sw.sendControl(wire.Fields{Op: wire.OpQueueEmpty, Lock: wire.ReservedLockBase + 1, Slots: 1})
	if f, _ := sw.recvBody(5 * time.Second); f.Op != wire.OpPushBack || f.Txn != 0 || f.Lock != wire.ReservedLockBase+1 {
		t.Fatalf("barrier echo %s", f.String())
	}
	ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResidents, Txn: 102, Timestamp: 3})
	f, body := ctl.recvBody(5 * time.Second)
	ids, err := wire.ParseLockIDs(nil, body, int(f.Slots))
	if err != nil || len(ids) != 1 || ids[0] != 5 {
		t.Fatalf("residents %v %v (%s)", ids, err, f.String())
	}
	ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminStats, Txn: 103, Timestamp: 3, Slots: 8})
	f, body = ctl.recvBody(5 * time.Second)
	stats, err := wire.ParseLockStats(nil, body, int(f.Slots))
	if err != nil || len(stats) != 1 || f.Token == 0 {
		t.Fatalf("stats %+v %v (%s)", stats, err, f.String())
	}
	if st := stats[0]; st.Lock != 5 || st.Requests != 2 || st.Overflows != 1 || st.Declared != 4 || st.Depth < 1 {
		t.Fatalf("stats of lock 5: %+v", st)
	}
	// Adopt with a floor far above: the epoch moves, c3's buffered request is granted above it.
	floor := uint64(1) << 50
	ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminAdopt, Lock: 5, Txn: 104, Timestamp: 3, Token: floor})
	if g := c3.expect(wire.OpGrant, 3); g.Token <= floor || g.Flags&wire.FlagForwarded == 0 {
		t.Fatalf("adopted grant %s", g.String())
	}
	if f, _ := ctl.recvBody(5 * time.Second); f.Status != wire.AdminAdopt || f.Priority != 0 || f.LeaseMicros != 1 {
		t.Fatalf("adopt reply %s", f.String())
	}
	if e := s.Epoch(); e != floor>>wire.EpochShift+1 {
		t.Fatalf("epoch %d after the floor, want %d", e, floor>>wire.EpochShift+1)
	}
	// Owned again: a direct acquire waits in the queue, a late overflow is an acquire.
	c2.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 5, Txn: 2, Flags: wire.FlagRetry})
	sw.sendControl(wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Mode: wire.Shared, Lock: 5, Txn: 4,
		Client: c1.addr()})
	eventuallyT(t, "two waiters", func() bool { return s.Stats().Waiters == 2 })
	if st := s.Stats(); st.Buffered != 0 || st.Adopted != 1 {
		t.Fatalf("after adopt: %+v", st)
	}
	if s.Term() != 3 {
		t.Fatalf("term %d", s.Term())
	}
}

// TestStandbyTakeover: a standby queues but grants nothing until the takeover, then waits out
// the grace and grants above the failed server's epoch.
func TestStandbyTakeover(t *testing.T) {
	s, stop, tp := startWithPeers(t, Config{Shards: 1, RackKey: testKey, Standby: true})
	defer stop()
	c := newPeer(t, s.Addr())
	c.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 9, Txn: 1})
	c.expectNothing(50 * time.Millisecond)
	const failed = 41
	tp.ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTakeover, Txn: 7, Token: failed,
		LeaseMicros: 30000})
	if f, _ := tp.ctl.recvBody(5 * time.Second); f.Status != wire.AdminTakeover || f.Token <= failed {
		t.Fatalf("takeover reply %s", f.String())
	}
	if g := c.expect(wire.OpGrant, 1); g.Token>>wire.EpochShift <= failed {
		t.Fatalf("grant %s: token not above epoch %d", g.String(), failed)
	}
}

// TestControllerLease: a server whose controller stops pinging holds every grant once the lease
// has run out, and grants again when a ping comes.
func TestControllerLease(t *testing.T) {
	clk := clock.NewManual(time.Unix(1000, 0))
	s, stop, tp := startWithPeers(t, Config{Shards: 1, RackKey: testKey, ControllerLease: 80 * time.Millisecond,
		Clock: clk})
	defer stop()
	c := newPeer(t, s.Addr())
	c.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 1})
	c.expect(wire.OpGrant, 1) // the first lease of authority
	clk.Advance(100 * time.Millisecond)
	eventuallyT(t, "the hold", s.Holding)
	c.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 2, Txn: 2})
	c.expectNothing(50 * time.Millisecond)
	tp.ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing, Txn: 9, Timestamp: 5})
	if f := tp.ctl.expect(wire.OpAdmin, 9); f.Timestamp != 5 {
		t.Fatalf("ping reply %s", f.String())
	}
	c.expect(wire.OpGrant, 2)
	if s.Holding() {
		t.Fatal("still holding after the ping")
	}
}
