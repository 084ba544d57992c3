package client

import (
	"net/netip"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// FuzzInput feeds arbitrary datagrams to a client that has requests of every kind waiting and a
// held grant: nothing may panic, and every datagram is counted as either malformed or received.
func FuzzInput(f *testing.F) {
	for _, fl := range []wire.Fields{
		{Op: wire.OpGrant, Lock: 1, Txn: 1, Token: 5, LeaseMicros: 100},
		{Op: wire.OpGrant, Lock: 2, Txn: 2, Token: 9},
		{Op: wire.OpReject, Lock: 1, Txn: 1, Status: wire.StatusQuota},
		{Op: wire.OpReject, Lock: 2, Txn: 2, Token: 9, Status: wire.StatusLeaseExpired},
		{Op: wire.OpRelease, Flags: wire.FlagReply, Lock: 2, Txn: 2, Token: 9},
		{Op: wire.OpLeaseProbe, Flags: wire.FlagReply, Lock: 2, Txn: 2, Token: 9, LeaseMicros: 7},
		{Op: wire.OpAdmin, Status: wire.AdminPing},
	} {
		f.Add(wire.Append(nil, &fl))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	c, err := New(Config{Servers: []string{"127.0.0.1:9"}, Local: "127.0.0.1:0"})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	from := netip.MustParseAddrPort("127.0.0.1:9")
	f.Fuzz(func(t *testing.T, b []byte) {
		// A waiting acquire on (1, 1), a held grant with waiting release and renewal on (2, 2).
		ka, kh := key{1, 1}, key{2, 2}
		a := &Grant{c: c, key: ka, kidx: -1}
		if err := c.register(a, kindAcquire, 0, c.getWaiter()); err != nil {
			t.Fatal(err)
		}
		g := &Grant{c: c, key: kh, mode: wire.Exclusive, token: 9, lease: time.Second, kidx: -1}
		c.mu.Lock()
		c.entries[kh] = g
		g.held, g.peer, g.server = true, from, from
		a.peer = from
		c.mu.Unlock()
		if err := c.register(g, kindRelease, 0, c.getWaiter()); err != nil {
			t.Fatal(err)
		}
		if err := c.register(g, kindProbe, 0, c.getWaiter()); err != nil {
			t.Fatal(err)
		}
		before := c.Stats()
		c.input(b, from)
		after := c.Stats()
		if after.Malformed+after.Received != before.Malformed+before.Received+1 {
			t.Fatalf("datagram not counted: %+v -> %+v", before, after)
		}
		c.mu.Lock()
		clear(c.entries)
		c.mu.Unlock()
	})
}
