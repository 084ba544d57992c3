package netchain

import (
	"bytes"
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The program's rules, step by step on the engine (Tofino-constraint mode): each step sends one
// datagram from a host and names the one answer expected (wire.Fields' String form, and the host
// it reaches), or "routed HOST" for a frame the switch only forwards, or "dropped".

const testSlots = 64

var (
	switchAddr = netip.MustParseAddrPort("10.0.0.1:8888")
	hosts      = map[string]struct {
		addr netip.AddrPort
		port int
	}{
		"c1": {netip.MustParseAddrPort("10.0.2.1:40000"), 1},
		"c2": {netip.MustParseAddrPort("10.0.2.2:40001"), 2},
		"s1": {netip.MustParseAddrPort("10.0.1.1:8888"), 301},
	}
)

func macOf(a netip.Addr) dataplane.MAC {
	b := a.As4()
	return dataplane.MAC{2, 0, b[0], b[1], b[2], b[3]}
}

type step struct {
	name string
	from string      // host
	to   string      // "" for the switch, else a host
	f    wire.Fields // the request (Version is set by the encoder)
	want string      // "c1: <answer>", "routed s1", "dropped"
}

// steps are the rules: grant, reject when held, a copy of the holder's acquire granted again
// with the same token, release by a non-holder refused, release by the holder, the next grant
// with the next token, every grant exclusive, a lock beyond the slots refused, a reply and any
// datagram to another host routed.
var steps = []step{
	{"free: granted, token 1", "c1", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 7, Txn: 11, Timestamp: 101},
		"c1: grant lock=7 txn=11 mode=X token=1 ts=101"},
	{"held: rejected would-block", "c2", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Flags: wire.FlagTry, Lock: 7, Txn: 12, Timestamp: 102},
		"c2: reject lock=7 txn=12 mode=X status=would-block ts=102"},
	{"shared on a held lock: rejected too", "c2", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 7, Txn: 13, Timestamp: 103},
		"c2: reject lock=7 txn=13 mode=S status=would-block ts=103"},
	{"the holder's copy: the same grant", "c1", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Flags: wire.FlagRetry, Lock: 7, Txn: 11, Timestamp: 104},
		"c1: grant lock=7 txn=11 mode=X token=1 ts=104"},
	{"release by a non-holder: refused", "c2", "", wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 7, Txn: 12, Token: 1, Timestamp: 105},
		"c2: reject lock=7 txn=12 mode=X status=not-holder token=1 ts=105"},
	{"release by the holder with a wrong token: refused", "c1", "", wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 7, Txn: 11, Token: 2, Timestamp: 106},
		"c1: reject lock=7 txn=11 mode=X status=not-holder token=2 ts=106"},
	{"still held after the refusals", "c2", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 7, Txn: 12, Timestamp: 107},
		"c2: reject lock=7 txn=12 mode=X status=would-block ts=107"},
	{"release by the holder", "c1", "", wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 7, Txn: 11, Token: 1, Timestamp: 108},
		"c1: release lock=7 txn=11 mode=X flags=reply token=1 ts=108"},
	{"its copy: refused (the client takes not-holder after a copy as done)", "c1", "", wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Flags: wire.FlagRetry, Lock: 7, Txn: 11, Token: 1, Timestamp: 109},
		"c1: reject lock=7 txn=11 mode=X status=not-holder token=1 ts=109"},
	{"shared on a free lock: granted exclusive, token 2", "c2", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 7, Txn: 13, Timestamp: 110},
		"c2: grant lock=7 txn=13 mode=X token=2 ts=110"},
	{"another shared request: rejected (every lock exclusive)", "c1", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Shared, Lock: 7, Txn: 14, Timestamp: 111},
		"c1: reject lock=7 txn=14 mode=S status=would-block ts=111"},
	{"another slot is free", "c1", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 63, Txn: 14, Timestamp: 112},
		"c1: grant lock=63 txn=14 mode=X token=1 ts=112"},
	{"a lock beyond the slots: bad-request", "c1", "", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: testSlots, Txn: 15, Timestamp: 113},
		"c1: reject lock=64 txn=15 mode=X status=bad-request ts=113"},
	{"a grant (a reply) is routed, not taken", "s1", "c1", wire.Fields{Op: wire.OpGrant, Mode: wire.Exclusive, Lock: 9, Txn: 16, Token: 5, Timestamp: 114},
		"routed c1"},
	{"a request to another host is answered by the switch too", "c1", "s1", wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 9, Txn: 17, Timestamp: 115},
		"c1: grant lock=9 txn=17 mode=X token=1 ts=115"},
	{"a lease-probe is routed", "c1", "s1", wire.Fields{Op: wire.OpLeaseProbe, Mode: wire.Exclusive, Lock: 9, Txn: 17, Token: 1, Timestamp: 116},
		"routed s1"},
}

// newTestSwitch loads src (nil: the program) with testSlots slots and routes to every host.
func newTestSwitch(t *testing.T, src []byte) *Switch {
	t.Helper()
	sw, err := Load(src, testSlots, engine.Config{TofinoConstraints: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hosts {
		if err := sw.AddRoute(netip.PrefixFrom(h.addr.Addr(), 32), dataplane.NextHop{SrcMAC: macOf(switchAddr.Addr()),
			DstMAC: macOf(h.addr.Addr()), Port: h.port}); err != nil {
			t.Fatal(err)
		}
	}
	return sw
}

// run sends every step through sw and returns the steps whose outcome differs from the
// expected one.
func run(sw *Switch, steps []step) []string {
	var bad []string
	for _, st := range steps {
		got, err := send(sw, st)
		if err != nil {
			got = "error: " + err.Error()
		}
		if got != st.want {
			bad = append(bad, fmt.Sprintf("%s: got %q, want %q", st.name, got, st.want))
		}
	}
	return bad
}

// send runs one step and describes what came out.
func send(sw *Switch, st step) (string, error) {
	from := hosts[st.from]
	dst := switchAddr
	if st.to != "" {
		dst = hosts[st.to].addr
	}
	frame := udpframe.Append(nil, udpframe.Endpoint{MAC: macOf(from.addr.Addr()), Addr: from.addr},
		udpframe.Endpoint{MAC: macOf(switchAddr.Addr()), Addr: dst}, wire.Append(nil, &st.f))
	res, err := sw.Process(from.port, frame)
	if err != nil {
		return "", err
	}
	if len(res.Out) == 0 {
		return "dropped", nil
	}
	if len(res.Out) > 1 {
		return "", fmt.Errorf("%d frames out", len(res.Out))
	}
	o := res.Out[0]
	var fr udpframe.Frame
	if err := udpframe.Parse(o.Data, &fr); err != nil {
		return "", err
	}
	to := ""
	for name, h := range hosts {
		if h.port == o.Port && fr.Dst == h.addr && fr.DstMAC == macOf(h.addr.Addr()) {
			to = name
		}
	}
	if to == "" {
		return "", fmt.Errorf("frame to %v (MAC %v) on port %d: no such host", fr.Dst, fr.DstMAC, o.Port)
	}
	if bytes.Equal(fr.Payload, wire.Append(nil, &st.f)) && st.to != "" {
		return "routed " + to, nil
	}
	if fr.Src != dst {
		return "", fmt.Errorf("answer from %v, want %v (the address the request was sent to)", fr.Src, dst)
	}
	h, err := wire.Parse(fr.Payload)
	if err != nil {
		return "", err
	}
	var f wire.Fields
	h.Decode(&f)
	return fmt.Sprintf("%s: %s ts=%d", to, f.String(), f.Timestamp), nil
}

func TestRules(t *testing.T) {
	sw := newTestSwitch(t, nil)
	for _, b := range run(sw, steps) {
		t.Error(b)
	}
	// The registers agree: lock 7 held by txn 13 after two grants, lock 63 by 14.
	for _, c := range []struct {
		slot        uint32
		txn, grants uint64
	}{{7, 13, 2}, {63, 14, 1}, {8, 0, 0}} {
		txn, grants, err := sw.Holder(c.slot)
		if err != nil || txn != c.txn || grants != c.grants {
			t.Errorf("slot %d: holder %d, grants %d, %v; want %d, %d", c.slot, txn, grants, err, c.txn, c.grants)
		}
	}
}

// Mutants of netchain.p4, each breaking one rule: the steps must catch every one (the rack
// model's negative control, testbed/rackmodel, runs MutantNoHolderCheck on a rack).
var mutants = map[string]struct{ old, new string }{
	"grant a held lock":           {"bit<1> ok = (h == 0 || h == hdr.nl.txn) ? 1w1 : 1w0;", "bit<1> ok = 1w1;"},
	"release by anyone":           {"bit<1> ok = (h == hdr.nl.txn && v == hdr.nl.token) ? 1w1 : 1w0;", "bit<1> ok = 1w1;"},
	"a copy counted as a grant":   {"bit<1> fresh = (h == 0) ? 1w1 : 1w0;", "bit<1> fresh = ok;"},
	"shared requests stay shared": {"hdr.nl.mode = (ok == 1) ? MODE_X : hdr.nl.mode;", ""},
}

// Mutant returns netchain.p4 with one of the rules above broken (a negative control).
func mutant(t *testing.T, name string) []byte {
	t.Helper()
	m := mutants[name]
	if !bytes.Contains(Source, []byte(m.old)) {
		t.Fatalf("mutant %q: %q is not in netchain.p4", name, m.old)
	}
	return bytes.Replace(Source, []byte(m.old), []byte(m.new), 1)
}

func TestNegativeControls(t *testing.T) {
	for name := range mutants {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			bad := run(newTestSwitch(t, mutant(t, name)), steps)
			if len(bad) == 0 {
				t.Fatalf("mutant %q passes every step", name)
			}
			t.Logf("caught: %s", bad[0])
		})
	}
}
