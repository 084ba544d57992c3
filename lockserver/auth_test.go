package lockserver

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netlock-go/netlock/wire"
)

// TestForgedAdminResetKeepsHolder is the exploit of issue 10: any host could send an admin reset
// of a lock, which dropped its exclusive holder and granted the lock to the next client, two
// holders at once. A server with default configuration (no rack key) refuses every control
// message; the forged reset is neither applied nor answered.
func TestForgedAdminResetKeepsHolder(t *testing.T) {
	s, stop := startServer(t, Config{Shards: 1})
	defer stop()
	holder, next, attacker := newPeer(t, s.Addr()), newPeer(t, s.Addr()), newPeer(t, s.Addr())
	holder.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 7, Txn: 1})
	holder.expect(wire.OpGrant, 1)
	next.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 7, Txn: 2})
	next.expectNothing(20 * time.Millisecond)
	attacker.send(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock, Lock: 7, Txn: 666})
	// The reset must not take effect: the waiter is neither granted nor rejected not-owner, and
	// the attacker hears nothing.
	next.expectNothing(50 * time.Millisecond)
	attacker.expectNothing(10 * time.Millisecond)
	if st := s.Stats(); st.Holders != 1 || st.Waiters != 1 {
		t.Fatalf("after a forged reset: %d holders, %d waiters; want 1 and 1", st.Holders, st.Waiters)
	}
	if n := s.ControlRefused()["no-key-configured"]; n != 1 {
		t.Fatalf("refused no-key-configured = %d, want 1 (all: %v)", n, s.ControlRefused())
	}
}

// TestControlRefusals: a control message is processed only from an allowed peer and with the
// rack key; everything else is dropped unanswered and counted by reason.
func TestControlRefusals(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, stop, tp := startWithPeers(t, Config{Shards: 1, Registerer: reg, RackKey: testKey})
	defer stop()
	ctl, holder, next := tp.ctl, newPeer(t, s.Addr()), newPeer(t, s.Addr())
	other := newPeer(t, s.Addr()) // an unrelated address (another port on loopback)
	holder.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 3, Txn: 1})
	holder.expect(wire.OpGrant, 1)
	next.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 3, Txn: 2})
	reset := wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock, Lock: 3, Txn: 9}
	for _, tc := range []struct {
		name   string
		send   func()
		reason string
	}{
		{"no trailer, unrelated address", func() { other.send(reset) }, "peer-not-allowed"},
		{"right key, wrong address", func() { other.sendControl(reset) }, "peer-not-allowed"},
		{"wrong key, right address", func() { ctl.sendKeyed(reset, uint64(testKey)^1) }, "bad-key"},
		{"no trailer, right address", func() { ctl.send(reset) }, "short"},
		{"half a trailer, right address", func() {
			ctl.sendRaw(append(wire.Append(nil, &reset), 1, 2, 3, 4))
		}, "short"},
		{"push-back, from anyone", func() {
			ctl.sendControl(wire.Fields{Op: wire.OpPushBack, Flags: wire.FlagForwarded, Lock: 3, Txn: 5,
				Client: next.addr()})
		}, "peer-not-allowed"},
		{"overflow from the controller", func() {
			ctl.sendControl(wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Lock: 4, Txn: 5,
				Client: next.addr()})
		}, "peer-not-allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.ControlRefused()[tc.reason]
			tc.send()
			eventuallyT(t, "the refusal counted", func() bool { return s.ControlRefused()[tc.reason] == before+1 })
			ctl.expectNothing(10 * time.Millisecond)
			other.expectNothing(1 * time.Millisecond)
			next.expectNothing(1 * time.Millisecond)
			if st := s.Stats(); st.Holders != 1 || st.Waiters != 1 || st.Buffered != 0 {
				t.Fatalf("state changed: %+v", st)
			}
		})
	}
	if n := metricValue(t, reg, "netlock_control_refused_total", "bad-key"); n != 1 {
		t.Errorf("netlock_control_refused_total{reason=bad-key} = %v, want 1", n)
	}
	// The controller with the key: the reset applies, the waiter is told, the answer is keyed.
	ctl.sendControl(reset)
	if f := next.expect(wire.OpReject, 2); f.Status != wire.StatusNotOwner {
		t.Fatalf("waiter told %s, want not-owner", f.String())
	}
	b, ok := ctl.recvRaw(5 * time.Second)
	if !ok {
		t.Fatal("no admin reply")
	}
	if h, err := wire.Parse(b); err != nil || h.Op() != wire.OpAdmin || !h.Has(wire.FlagReply) {
		t.Fatalf("reply %x: %v", b, err)
	}
	if k, ok := wire.RackKey(b); !ok || k != uint64(testKey) {
		t.Fatalf("admin reply of %d bytes lacks the rack key", len(b))
	}
	// An admin answer is never taken for a request (no ping-pong between two servers).
	ctl.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing, Flags: wire.FlagReply, Txn: 4})
	ctl.expectNothing(30 * time.Millisecond)
	if s.Malformed()["unexpected"] != 1 {
		t.Errorf("admin reply to a server: malformed %v, want unexpected 1", s.Malformed())
	}
}

// testPeers are the raw peers a test configured as the server's switch and controller.
type testPeers struct{ sw, ctl *peer }

// startWithPeers makes two raw peers on loopback, lists them (exact address and port) as the
// only switch and controller of a server with cfg, and starts it.
func startWithPeers(t *testing.T, cfg Config) (*Server, func(), testPeers) {
	t.Helper()
	sw, ctl := newPeer(t, netip.AddrPort{}), newPeer(t, netip.AddrPort{})
	cfg.Peers = Peers{Switches: []string{sw.addr().String()}, Controllers: []string{ctl.addr().String()}}
	s, stop := startServer(t, cfg)
	sw.srv, ctl.srv = s.Addr(), s.Addr()
	return s, stop, testPeers{sw, ctl}
}

// eventuallyT polls cond until it holds, failing the test after 10s.
func eventuallyT(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestStrayQueueEmpty: q2 is drained only by a queue-empty from the configured switch with the
// rack key; a stray one, from elsewhere or without the key, pushes nothing back.
func TestStrayQueueEmpty(t *testing.T) {
	s, stop, tp := startWithPeers(t, Config{Shards: 1, RackKey: testKey})
	defer stop()
	sw, stray, client := tp.sw, newPeer(t, s.Addr()), newPeer(t, s.Addr())
	for txn := uint64(1); txn <= 2; txn++ {
		sw.sendControl(wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Lock: 9, Txn: txn,
			Mode: wire.Exclusive, Client: client.addr()})
	}
	eventuallyT(t, "two buffered", func() bool { return s.Stats().Buffered == 2 })
	empty := wire.Fields{Op: wire.OpQueueEmpty, Lock: 9, Slots: 5}
	stray.send(empty)
	stray.sendControl(empty)
	sw.sendKeyed(empty, 42)
	eventuallyT(t, "three refusals", func() bool {
		r := s.ControlRefused()
		return r["peer-not-allowed"] == 2 && r["bad-key"] == 1
	})
	stray.expectNothing(20 * time.Millisecond)
	sw.expectNothing(10 * time.Millisecond)
	if st := s.Stats(); st.Buffered != 2 || st.PushedBack != 0 {
		t.Fatalf("after stray queue-empty: buffered %d, pushed back %d; want 2, 0", st.Buffered, st.PushedBack)
	}
	sw.sendControl(empty)
	for txn := uint64(1); txn <= 2; txn++ {
		b, ok := sw.recvRaw(5 * time.Second)
		if !ok {
			t.Fatalf("no push-back %d", txn)
		}
		h, err := wire.Parse(b)
		if err != nil || h.Op() != wire.OpPushBack || h.Txn() != txn {
			t.Fatalf("got %x, want push-back of txn %d", b, txn)
		}
		if k, ok := wire.RackKey(b); !ok || k != uint64(testKey) {
			t.Fatal("push-back without the rack key")
		}
	}
}

// TestRackKeyNotLogged: the key appears in no log line (debug level) and no formatting of the
// configuration.
func TestRackKeyNotLogged(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := trusted(Config{Shards: 1, Logger: log})
	s, stop := startServer(t, cfg)
	p := newPeer(t, s.Addr())
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing, Txn: 1})
	p.expect(wire.OpAdmin, 1)
	stop()
	k := uint64(testKey)
	text := logs.String() + fmt.Sprintf("%v %+v %#v %d %x %s", cfg, cfg, cfg, cfg.RackKey, cfg.RackKey, cfg.RackKey)
	for _, form := range []string{fmt.Sprintf("%x", k), fmt.Sprintf("%X", k), fmt.Sprintf("%d", k),
		fmt.Sprintf("%#x", k), fmt.Sprintf("%o", k)} {
		if strings.Contains(text, form) {
			t.Fatalf("the rack key appears as %q in:\n%s", form, text)
		}
	}
	if !strings.Contains(logs.String(), "rack_key=(set)") {
		t.Errorf("the serving line does not say that a key is set:\n%s", logs.String())
	}
}

// TestForwardedOnlyFromSwitch: a request flagged forwarded makes the server answer the client
// address written in its header; from anyone but a switch it is dropped, so that the server is
// no reflector (issue 18, item 7). From the switch it is served as before.
func TestForwardedOnlyFromSwitch(t *testing.T) {
	cfg := trusted(Config{Shards: 1})
	cfg.Peers.Switches = []string{"127.0.0.2"} // nobody the test sends from
	s, stop := startServer(t, cfg)
	defer stop()
	attacker, victim := newPeer(t, s.Addr()), newPeer(t, s.Addr())
	attacker.send(wire.Fields{Op: wire.OpAcquire, Flags: wire.FlagForwarded, Lock: 1, Txn: 1, Mode: wire.Exclusive,
		Client: victim.addr()})
	victim.expectNothing(50 * time.Millisecond)
	attacker.expectNothing(10 * time.Millisecond)
	if n := s.ControlRefused()["forwarded-not-from-switch"]; n != 1 {
		t.Fatalf("refused forwarded-not-from-switch = %d, want 1", n)
	}
	// Control: from an allowed switch the same request is served, to the written address.
	s2, stop2 := startServer(t, trusted(Config{Shards: 1}))
	defer stop2()
	sw, client := newPeer(t, s2.Addr()), newPeer(t, s2.Addr())
	sw.send(wire.Fields{Op: wire.OpAcquire, Flags: wire.FlagForwarded, Lock: 1, Txn: 1, Mode: wire.Exclusive,
		Client: client.addr()})
	client.expect(wire.OpGrant, 1)
}
