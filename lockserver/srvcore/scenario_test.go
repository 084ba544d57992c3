package srvcore

// Scenario tests: each file in testdata/ is a sequence of commands run against one Core, with
// the effects of each command as its expected output (github.com/cockroachdb/datadriven).
// Regenerate the expectations with `go test ./lockserver/srvcore -run Scenarios -rewrite` and
// review the diff.
//
// Grammar (one command per block; arguments are key=value, durations in Go syntax):
//
//	new [shards=N] [epoch=E] [grace=DUR] [standby] [ctl-lease=DUR] [lease=DUR] [nokey]
//	    A fresh Core at time 0. The rack key is testKey unless nokey; the switch sw (10.1.0.1)
//	    and the controller ctl (10.1.0.9) are its peers.
//	send from=cN|sw|ctl op=OP [lock=L] [txn=T] [mode=S|X] [token=K] [ts=N] [slots=N] [lease=US]
//	     [status=N] [fwd] [client=cN] [key=K|nokey]
//	    A datagram to the server (Handle): control ops carry the rack key unless key= says
//	    otherwise. OP is acquire, release, probe, overflow, queue-empty, or admin with status=N
//	    (a wire.Admin* number).
//	advance DUR
//	    Moves the clock forward and runs Tick.
//	persisted [epoch=E]
//	    Acknowledges the last asked epoch (or E): Persisted.
//	persist-failed
//	    PersistFailed for the last asked epoch.
//	epoch | holding | counters
//	    Prints the epoch in force / whether every grant is held / the malformed and refused counts.
//
// Output: one line per effect, "DEST <- MESSAGE" (an AdminStats answer's records follow it, one
// per line), then "persist epoch E" when the call asked for one; "(none)" when nothing.

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

const testKey wire.Key = 0x6e65746c6f636b21

var (
	swAddr  = netip.MustParseAddrPort("10.1.0.1:8888")
	ctlAddr = netip.MustParseAddrPort("10.1.0.9:7000")
)

func clientAddr(n int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), 5000)
}

func name(a netip.AddrPort) string {
	switch a {
	case swAddr:
		return "sw"
	case ctlAddr:
		return "ctl"
	}
	if !a.Addr().Is4() {
		return a.String()
	}
	if b := a.Addr().As4(); b[0] == 10 && b[1] == 0 && b[2] == 0 {
		return fmt.Sprintf("c%d", b[3])
	}
	return a.String()
}

func addrOf(t *testing.T, s string) netip.AddrPort {
	switch s {
	case "sw":
		return swAddr
	case "ctl":
		return ctlAddr
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "c"))
	if err != nil || !strings.HasPrefix(s, "c") {
		t.Fatalf("bad address %q", s)
	}
	return clientAddr(n)
}

type scenario struct {
	t     *testing.T
	c     *Core
	now   int64
	asked uint64
}

func (s *scenario) render(out *Out) string {
	var b strings.Builder
	for _, e := range out.Sends {
		msg := e.Msg.String()
		if e.Msg.Client.IsValid() {
			msg = strings.ReplaceAll(msg, e.Msg.Client.String(), name(e.Msg.Client))
		}
		fmt.Fprintf(&b, "%s <- %s\n", name(e.To), msg)
	}
	for _, e := range out.Bodies {
		fmt.Fprintf(&b, "%s <- %s body=%dB\n", name(e.To), e.Msg.String(), len(e.Data))
		if e.Msg.Status == wire.AdminStats {
			recs, err := wire.ParseLockStats(nil, e.Data, int(e.Msg.Slots))
			if err != nil {
				fmt.Fprintf(&b, "  %v\n", err)
			}
			for _, r := range recs {
				fmt.Fprintf(&b, "  lock=%d requests=%d overflows=%d depth=%d declared=%d\n", r.Lock, r.Requests,
					r.Overflows, r.Depth, r.Declared)
			}
		}
	}
	if out.Persist != 0 {
		s.asked = out.Persist
		fmt.Fprintf(&b, "persist epoch %d\n", out.Persist)
	}
	if b.Len() == 0 {
		return "(none)\n"
	}
	return b.String()
}

var ops = map[string]wire.Op{"acquire": wire.OpAcquire, "release": wire.OpRelease, "probe": wire.OpLeaseProbe,
	"overflow": wire.OpOverflow, "queue-empty": wire.OpQueueEmpty, "admin": wire.OpAdmin, "grant": wire.OpGrant,
	"push-back": wire.OpPushBack}

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{t: t}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			arg := func(k string) (string, bool) {
				for _, a := range d.CmdArgs {
					if a.Key == k {
						if len(a.Vals) == 0 {
							return "", true
						}
						return a.Vals[0], true
					}
				}
				return "", false
			}
			num := func(k string, def uint64) uint64 {
				v, ok := arg(k)
				if !ok {
					return def
				}
				n, err := strconv.ParseUint(v, 0, 64)
				if err != nil {
					t.Fatalf("%s=%q: %v", k, v, err)
				}
				return n
			}
			dur := func(k string) time.Duration {
				v, ok := arg(k)
				if !ok {
					return 0
				}
				x, err := time.ParseDuration(v)
				if err != nil {
					t.Fatalf("%s=%q: %v", k, v, err)
				}
				return x
			}
			switch d.Cmd {
			case "new":
				cfg := Config{Shards: int(num("shards", 1)), Epoch: num("epoch", 1), Grace: dur("grace"),
					ControllerLease: dur("ctl-lease"), Instance: 7, Key: testKey,
					Peers: Peers{Switches: []string{"10.1.0.1"}, Controllers: []string{"10.1.0.9"}},
					Core:  lockcore.Config{DefaultLease: time.Second, MaxLease: 10 * time.Second}}
				if l := dur("lease"); l > 0 {
					cfg.Core.DefaultLease = l
				}
				if _, ok := arg("standby"); ok {
					cfg.Standby = true
				}
				if _, ok := arg("nokey"); ok {
					cfg.Key = 0
				}
				c, err := New(cfg)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				s.c, s.now = c, 0
				return "ok\n"
			case "send":
				from, _ := arg("from")
				opName, _ := arg("op")
				op, ok := ops[opName]
				if !ok {
					t.Fatalf("unknown op %q", opName)
				}
				f := wire.Fields{Op: op, Lock: uint32(num("lock", 0)), Txn: num("txn", 0), Token: num("token", 0),
					Timestamp: num("ts", 0), Slots: uint16(num("slots", 0)), LeaseMicros: uint32(num("lease", 0)),
					Status: wire.Status(num("status", 0))}
				if m, _ := arg("mode"); m == "X" {
					f.Mode = wire.Exclusive
				}
				if _, ok := arg("fwd"); ok {
					f.Flags |= wire.FlagForwarded
				}
				if c, ok := arg("client"); ok {
					f.Client = addrOf(t, c)
				}
				b := wire.Append(nil, &f)
				if op.IsControl() {
					key := uint64(testKey)
					if k, ok := arg("key"); ok {
						if k == "nokey" {
							key = 0
						} else {
							key = num("key", 0)
						}
					}
					if key != 0 {
						b = append(b, make([]byte, wire.AuthLen)...)
						wire.SetRackKey(b, key)
					}
				}
				var out Out
				s.c.Handle(s.now, b, addrOf(t, from), &out)
				return s.render(&out)
			case "advance":
				x, err := time.ParseDuration(d.CmdArgs[0].Key)
				if err != nil {
					t.Fatal(err)
				}
				s.now += int64(x)
				var out Out
				s.c.Tick(s.now, &out)
				return s.render(&out)
			case "persisted":
				e := num("epoch", s.asked)
				var out Out
				s.c.Persisted(s.now, e, &out)
				return s.render(&out)
			case "persist-failed":
				var out Out
				s.c.PersistFailed(s.now, s.asked, &out)
				return s.render(&out)
			case "epoch":
				return fmt.Sprintf("%d\n", s.c.Epoch())
			case "holding":
				return fmt.Sprintf("%v\n", s.c.Holding())
			case "counters":
				var b strings.Builder
				for i, v := range s.c.Malformed() {
					if v != 0 {
						fmt.Fprintf(&b, "malformed %s %d\n", BadNames[i], v)
					}
				}
				for i, v := range s.c.Refused() {
					if v != 0 {
						fmt.Fprintf(&b, "refused %s %d\n", RefusedNames[i], v)
					}
				}
				if b.Len() == 0 {
					return "(none)\n"
				}
				return b.String()
			}
			t.Fatalf("unknown command %q", d.Cmd)
			return ""
		})
	})
}
