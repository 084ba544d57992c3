package srvcore

import (
	"net/netip"
	"strings"
	"testing"
)

func mustAddrPort(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestParsePeers(t *testing.T) {
	ps, err := parsePeers("x", []string{"10.0.0.1", "10.1.0.0/16", "127.0.0.1:9000", "[::1]:7", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"10.0.0.1:1", true}, {"10.0.0.2:1", false}, {"10.1.200.3:5", true}, {"127.0.0.1:9000", true},
		{"127.0.0.1:9001", false}, {"[::1]:7", true}, {"[::1]:8", false}, {"[fd12::1]:1", true},
		{"[::ffff:10.0.0.1]:3", true},
	} {
		if got := ps.contains(mustAddrPort(t, tc.addr)); got != tc.ok {
			t.Errorf("contains(%s) = %v, want %v", tc.addr, got, tc.ok)
		}
	}
	for _, bad := range []string{"", "host.example", "10.0.0.1/40", "1.2.3.4:x"} {
		if _, err := parsePeers("peers.switches", []string{bad}); err == nil || !strings.Contains(err.Error(), "peers.switches") {
			t.Errorf("parsePeers(%q) = %v, want an error naming the key", bad, err)
		}
	}
}
