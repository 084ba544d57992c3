package e2e

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/netlockgen"
	"github.com/netlock-go/netlock/testbed/softrack"
	"github.com/netlock-go/netlock/wire"
)

// TestRackWhoMayTalk (docs/protocol.md, "Who may send what"): on the whole rack, a client host
// forges the control messages that change lock state. To the switch, from client port 4: an
// admin reset of a lock the switch holds (with the right rack key: the forger learned it, the
// port still gives it away) and a push-back without the key. To the lock server: an admin reset
// of a lock it holds and a queue-empty (both with the right key: the source address gives them
// away). Each is refused and counted (the switch's drop counter by reason, the server's
// netlock_control_refused_total{peer-not-allowed}), and lock state is unchanged: each holder
// still holds, the next acquirer waits for its release and gets a larger token. The controller's
// own admin packets work meanwhile: once the load stops, it moves the lock out of the switch
// (probes, drain, reset). Control: the same admin reset sent to the server from the
// controller's address is accepted and does reset the lock (a second holder is granted beside
// the first), so the refusal is the source's doing, not a broken forgery.
func TestRackWhoMayTalk(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the rack for seconds")
	}
	ctx, cancel := context.WithTimeout(context.Background(), rackPatience)
	defer cancel()
	// MinRate keeps the locks touched a few times on their servers: only the hammered one moves.
	r, err := softrack.Start(ctx, softrack.Config{Clients: 4, Generated: netlockgen.NetlockPipeline, Controller: ctlcore.Config{AllocPeriod: 100 * time.Millisecond,
		SweepPeriod: 50 * time.Millisecond, MinRate: 200}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	var cs []*client.Client
	for i := 1; i <= 3; i++ {
		c, err := r.NewClient(i, client.Config{RetryInterval: 20 * time.Millisecond, Lease: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cs = append(cs, c)
	}
	const hot, cold = uint32(100), uint32(5001) // cold is on server 5001%2+1 = 2
	coldServer := r.Server(2)

	// Load the hot lock until the controller moved it into the switch, then let client 1 take
	// it from the switch: the grant counter of its server (1) must not move.
	inSwitch := func() bool {
		p := r.Primary()
		return p != nil && slices.Contains(p.Snapshot().Locks, hot)
	}
	load := func() {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for _, c := range cs[1:] {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					g, err := c.Acquire(ctx, hot, wire.Exclusive)
					if err != nil {
						t.Error(err)
						return
					}
					if err := g.Release(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		ok := until(inSwitch)
		close(stop)
		wg.Wait()
		if !ok {
			t.Fatalf("lock %d never moved into the switch", hot)
		}
	}
	var gHot *client.Grant
	for attempt := 0; gHot == nil; attempt++ {
		if attempt == 20 {
			t.Fatalf("lock %d was never granted by the switch", hot)
		}
		load()
		before := r.Server(1).Stats().Grants
		g, err := cs[0].Acquire(ctx, hot, wire.Exclusive)
		if err != nil {
			t.Fatal(err)
		}
		if r.Server(1).Stats().Grants == before && inSwitch() {
			gHot = g
			break
		}
		// The lock was on its way out (the load stopped): again.
		if err := g.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Client 1 holds the cold lock too (server 2 grants it).
	gCold, err := cs[0].Acquire(ctx, cold, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}

	dropsBefore, err := r.SwitchDrops()
	if err != nil {
		t.Fatal(err)
	}
	refusedBefore := coldServer.ControlRefused()["peer-not-allowed"]

	forger, err := r.Host(4).ListenUDP(0)
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	send := func(to netip.AddrPort, b []byte) {
		t.Helper()
		if _, err := forger.WriteTo(b, net.UDPAddrFromAddrPort(to)); err != nil {
			t.Fatal(err)
		}
	}
	key := r.Key()
	switchAddr := netip.AddrPortFrom(r.Plan().Switch(), wire.Port)
	serverAddr := r.ServerAddr(2)
	// To the switch: an admin reset with the rack key, from a data port.
	adm := make([]byte, wire.ControlLen+dataplane.AdminBodyLen)
	wire.Header(adm).Encode(&wire.Fields{Op: wire.OpAdmin, Status: wire.AdminSwitchReset, Lock: hot, Slots: 77})
	wire.SetRackKey(adm, key)
	send(switchAddr, adm)
	// To the switch: a push-back of a request for the hot lock, with a guessed key.
	pb := wire.Append(nil, &wire.Fields{Op: wire.OpPushBack, Lock: hot, Txn: 0xbad, Mode: wire.Exclusive})
	pb = append(pb, make([]byte, wire.AuthLen)...)
	wire.SetRackKey(pb, key^0x5a5a)
	send(switchAddr, pb)
	// To the server: an admin reset and a queue-empty of the cold lock, with the rack key.
	reset := func(txn uint64) []byte {
		b := wire.Append(nil, &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock, Lock: cold, Txn: txn})
		b = append(b, make([]byte, wire.AuthLen)...)
		wire.SetRackKey(b, key)
		return b
	}
	send(serverAddr, reset(0xf00d))
	qe := wire.Append(nil, &wire.Fields{Op: wire.OpQueueEmpty, Lock: cold, Slots: 8})
	qe = append(qe, make([]byte, wire.AuthLen)...)
	wire.SetRackKey(qe, key)
	send(serverAddr, qe)

	// The refusals are counted (wait for the datagrams to get through; a hang guard only).
	if !until(func() bool {
		d, err := r.SwitchDrops()
		return err == nil && d[dataplane.DropAdminPort] > dropsBefore[dataplane.DropAdminPort] &&
			d[dataplane.DropPushBackKey] > dropsBefore[dataplane.DropPushBackKey] &&
			coldServer.ControlRefused()["peer-not-allowed"] >= refusedBefore+2
	}) {
		d, _ := r.SwitchDrops()
		t.Fatalf("refusals not counted: switch drops %v (before %v), server peer-not-allowed %d (before %d)",
			d, dropsBefore, coldServer.ControlRefused()["peer-not-allowed"], refusedBefore)
	}

	// Lock state is unchanged: client 2 waits behind client 1 on both locks, and is granted each
	// only after client 1's release, with a larger token.
	for _, g := range []*client.Grant{gHot, gCold} {
		got := make(chan *client.Grant, 1)
		go func() {
			g2, err := cs[1].Acquire(ctx, g.Lock(), wire.Exclusive)
			if err != nil {
				t.Error(err)
			}
			got <- g2
		}()
		select {
		case g2 := <-got:
			t.Fatalf("lock %d granted to client 2 (token %d) while client 1 holds it (token %d): a forgery took effect",
				g.Lock(), g2.Token(), g.Token())
		case <-g.Lost():
			t.Fatalf("client 1 lost lock %d: %v", g.Lock(), g.LostErr())
		case <-time.After(300 * time.Millisecond):
		}
		if err := g.Release(ctx); err != nil {
			t.Fatalf("client 1's release of lock %d: %v", g.Lock(), err)
		}
		g2 := <-got
		if g2 == nil {
			t.FailNow()
		}
		if g2.Token() <= g.Token() {
			t.Errorf("lock %d: token %d after %d", g.Lock(), g2.Token(), g.Token())
		}
		if err := g2.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// The controller's own admin packets work: with the load gone, it moves the hot lock out of
	// the switch (drain probes and the reset go through the CPU port).
	if !until(func() bool { p := r.Primary(); return p != nil && !inSwitch() && p.Snapshot().Stats.MovesOut > 0 }) {
		t.Fatalf("the controller did not move lock %d out of the switch: %+v", hot, r.Primary().Snapshot().Stats)
	}

	// Control: the reset the forger sent, from the controller's address, is accepted and resets
	// the cold lock under its holder.
	g1, err := cs[0].Acquire(ctx, cold, wire.Exclusive)
	if err != nil {
		t.Fatal(err)
	}
	ctl, err := r.ControllerHost().ListenUDP(0)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	if _, err := ctl.WriteTo(reset(0xc0de), net.UDPAddrFromAddrPort(serverAddr)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	_ = ctl.SetReadDeadline(time.Now().Add(rackPatience))
	n, _, err := ctl.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no answer to the controller's reset: %v", err)
	}
	var f wire.Fields
	if h, err := wire.Parse(buf[:n]); err != nil {
		t.Fatal(err)
	} else {
		h.Decode(&f)
	}
	if f.Op != wire.OpAdmin || f.Status != wire.AdminResetLock || f.Txn != 0xc0de {
		t.Fatalf("answer to the controller's reset: %s", f.String())
	}
	g2, err := cs[1].Acquire(ctx, cold, wire.Exclusive)
	if err != nil {
		t.Fatalf("after the controller's reset, client 2 was not granted lock %d: %v", cold, err)
	}
	t.Logf("control: the controller's reset let client 2 in (token %d) beside client 1 (token %d)", g2.Token(), g1.Token())
	_ = g2.Release(ctx)
	_ = g1.Release(ctx)
}
