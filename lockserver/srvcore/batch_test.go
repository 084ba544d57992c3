package srvcore

import (
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

func newBatchCore(t *testing.T, accept bool) *Core {
	t.Helper()
	c, err := New(Config{Shards: 2, Epoch: 1, Instance: 7, Key: testKey, AcceptBatch: accept,
		Peers: Peers{Switches: []string{"10.1.0.1"}, Controllers: []string{"10.1.0.9"}},
		Core:  lockcore.Config{DefaultLease: time.Second, MaxLease: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// datagram encodes f as a single datagram; control ops carry the rack key.
func datagram(f wire.Fields) []byte {
	b := wire.Append(nil, &f)
	if f.Op.IsControl() {
		b = append(b, make([]byte, wire.AuthLen)...)
		wire.SetRackKey(b, uint64(testKey))
	}
	return b
}

func effects(out *Out) []string {
	var s []string
	for _, e := range out.Sends {
		s = append(s, fmt.Sprintf("%s <- %s", name(e.To), e.Msg.String()))
	}
	return s
}

// counters renders what a Core counted: its lock cores' statistics, malformed and refused.
func counters(c *Core) string {
	return fmt.Sprintf("%+v malformed=%v refused=%v", c.Stats(), c.Malformed(), c.Refused())
}

type sent struct {
	from netip.AddrPort
	msg  wire.Fields
}

// TestBatchSameAsSingle: the headers of a batch are handled exactly as the same headers sent as
// single datagrams, one after the other, would be: the same answers in the same order, the same
// state and counters. In particular a server refuses (drops, as switch-resident) every batched
// acquire of a lock it yielded to the switch, as it drops a single one, and refuses a forwarded
// request from a client as it refuses a single one.
func TestBatchSameAsSingle(t *testing.T) {
	c1, c2 := clientAddr(1), clientAddr(2)
	acq := func(lock uint32, txn uint64) wire.Fields {
		return wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: txn}
	}
	yield := func(lock uint32) sent {
		return sent{ctlAddr, wire.Fields{Op: wire.OpAdmin, Status: wire.AdminYield, Lock: lock, Txn: 900, Timestamp: 1}}
	}
	tests := []struct {
		name  string
		setup []sent
		batch func(setup []lockcore.Effect) []wire.Fields
		// want are substrings of the answers, in order (checked on the single run).
		want []string
	}{
		{"grants", nil, func([]lockcore.Effect) []wire.Fields {
			return []wire.Fields{acq(1, 1), acq(2, 2), acq(3, 3)}
		}, []string{"grant lock=1 txn=1", "grant lock=2 txn=2", "grant lock=3 txn=3"}},
		{"same-lock", nil, func([]lockcore.Effect) []wire.Fields {
			try := acq(1, 3)
			try.Flags = wire.FlagTry
			return []wire.Fields{acq(1, 1), acq(1, 2), try, acq(1, 1)}
		}, []string{"grant lock=1 txn=1", "reject lock=1 txn=3 mode=X status=would-block"}},
		{"yielded-lock", []sent{yield(5)}, func([]lockcore.Effect) []wire.Fields {
			return []wire.Fields{acq(5, 1), acq(6, 2), acq(5, 3)}
		}, []string{"grant lock=6 txn=2"}},
		{"yielded-lock-own-holder", []sent{{c1, acq(5, 1)}, yield(5)}, func(s []lockcore.Effect) []wire.Fields {
			tok := s[0].Msg.Token
			return []wire.Fields{acq(5, 2), {Op: wire.OpLeaseProbe, Lock: 5, Txn: 1, Token: tok},
				{Op: wire.OpRelease, Lock: 5, Txn: 1, Token: tok}, acq(5, 4)}
		}, []string{"lease-probe lock=5 txn=1 mode=S flags=reply", "release lock=5 txn=1 mode=S flags=reply"}},
		{"not-holder", nil, func([]lockcore.Effect) []wire.Fields {
			return []wire.Fields{{Op: wire.OpRelease, Lock: 7, Txn: 9, Token: 3}, {Op: wire.OpLeaseProbe, Lock: 8, Txn: 9, Token: 3}}
		}, []string{"status=not-holder", "status=not-holder"}},
		{"forwarded-from-client", nil, func([]lockcore.Effect) []wire.Fields {
			f := acq(4, 1)
			f.Flags, f.Client = wire.FlagForwarded, clientAddr(9)
			return []wire.Fields{f, acq(4, 2)}
		}, []string{"grant lock=4 txn=2"}},
		{"reserved-lock", nil, func([]lockcore.Effect) []wire.Fields {
			return []wire.Fields{acq(wire.ReservedLockBase+1, 1), acq(10, 1)}
		}, []string{"grant lock=10 txn=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			single, batched := newBatchCore(t, true), newBatchCore(t, true)
			var setupOut []lockcore.Effect
			for _, s := range tt.setup {
				for _, c := range []*Core{single, batched} {
					var out Out
					c.Handle(0, datagram(s.msg), s.from, &out)
					if c == single {
						setupOut = append(setupOut, out.Sends...)
					}
				}
			}
			hs := tt.batch(setupOut)
			var want []string
			for _, f := range hs {
				var out Out
				single.Handle(1, datagram(f), c2, &out)
				if out.BatchTo.IsValid() {
					t.Fatal("BatchTo set for a single datagram")
				}
				want = append(want, effects(&out)...)
			}
			var out Out
			batched.Handle(1, wire.AppendBatch(nil, hs...), c2, &out)
			if out.BatchTo != c2 {
				t.Fatalf("BatchTo %v, want %v", out.BatchTo, c2)
			}
			if got := effects(&out); !reflect.DeepEqual(got, want) {
				t.Fatalf("batch answers:\n%s\nsingle answers:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if g, w := counters(batched), counters(single); g != w {
				t.Fatalf("batch counters\n%s\nsingle counters\n%s", g, w)
			}
			all := strings.Join(want, "\n")
			for _, s := range tt.want {
				i := strings.Index(all, s)
				if i < 0 {
					t.Fatalf("answers lack %q:\n%s", s, strings.Join(want, "\n"))
				}
				all = all[i+len(s):]
			}
			for _, e := range out.Sends {
				if e.Msg.Flags&wire.FlagBatch != 0 {
					t.Fatalf("answer %s carries the batch flag", e.Msg.String())
				}
			}
			switch tt.name {
			case "yielded-lock":
				if st := batched.Stats(); st.ResidentDropped != 2 {
					t.Fatalf("ResidentDropped %d, want 2", st.ResidentDropped)
				}
			case "forwarded-from-client":
				if r := batched.Refused(); r[RefusedForwarded] != 1 {
					t.Fatalf("refused %v", r)
				}
			}
		})
	}
}

// TestBatchControlRefused: control messages never ride in a batch, even from the peer allowed
// to send them: each is refused (control-in-batch) and the client requests around it are
// served. The negative control: the same messages as single datagrams, with the key, are
// accepted.
func TestBatchControlRefused(t *testing.T) {
	ctl := []struct {
		from netip.AddrPort
		msg  wire.Fields
	}{
		{swAddr, wire.Fields{Op: wire.OpOverflow, Flags: wire.FlagForwarded, Mode: wire.Exclusive, Lock: 5, Txn: 3,
			Client: clientAddr(3)}},
		{swAddr, wire.Fields{Op: wire.OpQueueEmpty, Lock: 5, Slots: 1}},
		{ctlAddr, wire.Fields{Op: wire.OpAdmin, Status: wire.AdminYield, Lock: 6, Txn: 900, Timestamp: 1}},
		{ctlAddr, wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock, Lock: 1, Txn: 901}},
		{clientAddr(1), wire.Fields{Op: wire.OpPushBack, Lock: 5}},
	}
	for _, x := range ctl {
		t.Run(x.msg.Op.String(), func(t *testing.T) {
			c := newBatchCore(t, true)
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 1}
			acq2 := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 2, Txn: 2}
			var out Out
			c.Handle(0, wire.AppendBatch(nil, acq, x.msg, acq2), x.from, &out)
			got := strings.Join(effects(&out), "\n")
			if !strings.Contains(got, "grant lock=1 txn=1") || !strings.Contains(got, "grant lock=2 txn=2") ||
				len(out.Sends) != 2 {
				t.Fatalf("answers:\n%s", got)
			}
			if r := c.Refused(); r[RefusedBatched] != 1 {
				t.Fatalf("refused %v, want one control-in-batch", r)
			}
			if x.msg.Op == wire.OpPushBack {
				return // no server accepts a push-back, single or not
			}
			// Negative control: single, with the key, from the same peer, it is processed.
			before := c.Refused()
			out.Reset()
			c.Handle(0, datagram(x.msg), x.from, &out)
			if c.Refused() != before || c.Malformed() != [BadReasons]uint64{} {
				t.Fatalf("single %s refused: %v %v", x.msg.String(), c.Refused(), c.Malformed())
			}
		})
	}
}

// TestBatchDroppedWhole: a malformed batch, or any batch to a server that does not accept them,
// is dropped whole and counted once: no header of it is stepped.
func TestBatchDroppedWhole(t *testing.T) {
	hs := []wire.Fields{{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 1},
		{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 2, Txn: 2}, {Op: wire.OpAcquire, Lock: 3, Txn: 3}}
	good := wire.AppendBatch(nil, hs...)
	mut := func(off int, v byte) []byte { b := append([]byte(nil), good...); b[off] = v; return b }
	many := make([]wire.Fields, wire.MaxBatch+1)
	for i := range many {
		many[i] = wire.Fields{Op: wire.OpAcquire, Lock: uint32(i + 1), Txn: uint64(i + 1)}
	}
	tests := []struct {
		name   string
		accept bool
		b      []byte
		reason int
	}{
		{"off", false, good, BadBatchOff},
		{"off-one", false, wire.AppendBatch(nil, hs[0]), BadBatchOff},
		{"trailing-partial", true, good[:2*wire.Len+10], BadBatch},
		{"rack-key-trailer", true, append(append([]byte(nil), good...), make([]byte, wire.AuthLen)...), BadBatch},
		{"too-many", true, wire.AppendBatch(nil, many...), BadBatch},
		{"flag-missing-inside", true, mut(wire.Len+3, 0), BadBatch},
		{"version-inside", true, mut(2*wire.Len, 2), BadVersion},
		{"op-inside", true, mut(wire.Len+1, 77), BadOp},
		{"mode-inside", true, mut(wire.Len+2, 9), BadMode},
		{"short", true, good[:20], BadShort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newBatchCore(t, tt.accept)
			var out Out
			c.Handle(0, tt.b, clientAddr(1), &out)
			var want [BadReasons]uint64
			want[tt.reason] = 1
			if len(out.Sends) != 0 || c.Malformed() != want || c.Stats().Requests != [16]uint64{} {
				t.Fatalf("answers %v, malformed %v (want %v), requests %v", effects(&out), c.Malformed(), want,
					c.Stats().Requests)
			}
			// The same client's single datagram is served.
			c.Handle(0, datagram(hs[0]), clientAddr(1), &out)
			if len(out.Sends) != 1 || out.Sends[0].Msg.Op != wire.OpGrant {
				t.Fatalf("single after the batch: %v", effects(&out))
			}
		})
	}
}
