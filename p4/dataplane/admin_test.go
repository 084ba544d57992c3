package dataplane

import (
	"slices"
	"testing"

	"github.com/netlock-go/netlock/wire"
)

func FuzzParseAdminReply(f *testing.F) {
	r := AdminRequest{Op: wire.AdminSwitchProbe, ID: 7, Lock: 3, Level: 1, Offset: 2, Value: 99}
	frame := r.Frame(nil, 0x1234)
	f.Add(frame)
	f.Add(frame[:40])
	f.Fuzz(func(t *testing.T, b []byte) {
		rep, err := ParseAdminReply(b)
		if err != nil {
			return
		}
		if !rep.Op.IsSwitchAdmin() {
			t.Fatalf("parsed a reply of sub-operation %d", rep.Op)
		}
	})
}

// TestAdminRoundTrip: a request's frame, with the reply flag set, parses back to its fields.
func TestAdminRoundTrip(t *testing.T) {
	r := AdminRequest{Op: wire.AdminSwitchForceRelease, ID: 513, Lock: 70000, Txn: 1 << 40, Token: 99, Value: 5}
	b := r.PacketOut(nil, 0xabc)
	if b[0] != PacketOutAdmin || len(b) != PacketOutLen+AdminFrameLen {
		t.Fatalf("packet-out header % x, length %d", b[:3], len(b))
	}
	frame := b[PacketOutLen:]
	if _, err := ParseAdminReply(frame); err != ErrNotAdmin {
		t.Fatalf("a request parsed as a reply: %v", err)
	}
	h := wire.Header(frame[14+20+8:])
	h.SetFlags(wire.FlagReply)
	rep, err := ParseAdminReply(frame)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Op != r.Op || rep.ID != r.ID || rep.Lock != r.Lock || rep.Value != r.Value {
		t.Fatalf("reply %+v", rep)
	}
	if k, _ := wire.RackKey(frame[14+20+8:]); k != 0xabc {
		t.Fatalf("rack key %#x", k)
	}
	raw := RawPacketOut(nil, 300, []byte{1, 2})
	if raw[0] != PacketOutRaw || int(raw[1])<<1|int(raw[2]>>7) != 300 {
		t.Fatalf("raw packet-out % x", raw)
	}
	port, reason, rest, err := ParsePacketIn([]byte{255 >> 1, 0x80 | 1, 9})
	if err != nil || port != 255 || reason != 1 || len(rest) != 1 {
		t.Fatalf("packet-in: %d %d %v %v", port, reason, rest, err)
	}
}

// TestSweepRules: the lease sweep's rules shared by every control plane of the switch.
func TestSweepRules(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    AdminReply
		want bool
	}{
		{"live grant within its lease", AdminReply{Live: true, Token: 9, Now: 1500, GrantTime: 1000, Lease: 500}, false},
		{"live grant past its lease", AdminReply{Live: true, Token: 9, Now: 1501, GrantTime: 1000, Lease: 500}, true},
		{"past its lease across the clock's wrap", AdminReply{Live: true, Token: 9, Now: 100, GrantTime: 0xFFFFFF00, Lease: 300}, true},
		{"within its lease across the wrap", AdminReply{Live: true, Token: 9, Now: 100, GrantTime: 0xFFFFFF00, Lease: 400}, false},
		{"a waiter (no token)", AdminReply{Live: true, Now: 9000, GrantTime: 1000, Lease: 500}, false},
		{"a released slot", AdminReply{Token: 9, Now: 9000, GrantTime: 1000, Lease: 500}, false},
	} {
		if got := tt.r.LeaseExpired(); got != tt.want {
			t.Errorf("%s: LeaseExpired = %v, want %v", tt.name, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name string
		r    AdminReply
		want bool
	}{
		{"empty queue, requests buffered", AdminReply{Buffered: 2}, true},
		{"empty queue, nothing buffered", AdminReply{}, false},
		{"a holder", AdminReply{Holders: 1, Used: [Levels]uint16{1, 0}, Buffered: 2}, false},
		{"a slot used at level 1", AdminReply{Used: [Levels]uint16{0, 1}, Buffered: 2}, false},
	} {
		if got := tt.r.QueueEmptyOwed(); got != tt.want {
			t.Errorf("%s: QueueEmptyOwed = %v, want %v", tt.name, got, tt.want)
		}
	}
	got := SlotProbes(7, AdminReply{Used: [Levels]uint16{3, 2}})
	want := []AdminRequest{{Op: wire.AdminSwitchProbe, Lock: 7, Level: 0, Offset: 1}, {Op: wire.AdminSwitchProbe, Lock: 7, Level: 0, Offset: 2},
		{Op: wire.AdminSwitchProbe, Lock: 7, Level: 1, Offset: 0}, {Op: wire.AdminSwitchProbe, Lock: 7, Level: 1, Offset: 1}}
	if !slices.Equal(got, want) {
		t.Errorf("SlotProbes = %+v, want %+v", got, want)
	}
	if ps := SlotProbes(7, AdminReply{Used: [Levels]uint16{1, 0}}); len(ps) != 0 {
		t.Errorf("SlotProbes of a lone head = %+v, want none", ps)
	}
}
