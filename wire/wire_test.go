package wire_test

import (
	"bytes"
	"errors"
	"math"
	"net/netip"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/wire"
	"github.com/netlock-go/netlock/wire/layer"
)

// full is a header with every field set to a value whose bytes are distinct, so that a field
// written at the wrong offset shows up in another field.
var full = wire.Fields{
	Op:          wire.OpGrant,
	Mode:        wire.Exclusive,
	Flags:       wire.FlagReply | wire.FlagForwarded | wire.FlagRenewed,
	Status:      wire.StatusNotOwner,
	Priority:    7,
	Tenant:      0x0a0b,
	Lock:        0x11223344,
	Txn:         0x2122232425262728,
	Token:       0x3132333435363738,
	Timestamp:   0x4142434445464748,
	LeaseMicros: 0x51525354,
	Client:      netip.MustParseAddrPort("192.0.2.61:24930"), // 0x6162
	Slots:       0x7172,
}

// fullBytes is full as docs/protocol.md lays it out, written by hand.
var fullBytes = []byte{
	1, 3, 1, 0x19, 5, 7, 0x0a, 0x0b, // version op mode flags status prio tenant
	0x11, 0x22, 0x33, 0x44, // lock
	0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, // txn
	0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, // token
	0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, // timestamp
	0x51, 0x52, 0x53, 0x54, // lease
	192, 0, 2, 61, 0x61, 0x62, // client ip, port
	0x71, 0x72, // slots
}

func TestLayoutMatchesSpec(t *testing.T) {
	if len(fullBytes) != wire.Len {
		t.Fatalf("spec bytes: %d, want %d", len(fullBytes), wire.Len)
	}
	got := wire.Append(nil, &full)
	if !bytes.Equal(got, fullBytes) {
		t.Fatalf("Encode(full):\n got % x\nwant % x", got, fullBytes)
	}
	h, err := wire.Parse(fullBytes)
	if err != nil {
		t.Fatal(err)
	}
	var f wire.Fields
	h.Decode(&f)
	if f != full {
		t.Fatalf("Decode:\n got %+v\nwant %+v", f, full)
	}
}

func TestRoundTripEveryField(t *testing.T) {
	tests := []struct {
		name  string
		f     wire.Fields
		check func(h wire.Header) bool
	}{
		{"zero", wire.Fields{}, func(h wire.Header) bool { return h.Op() == wire.OpAcquire && h.Mode() == wire.Shared }},
		{"op-admin", wire.Fields{Op: wire.OpAdmin}, func(h wire.Header) bool { return h.Op() == wire.OpAdmin }},
		{"op-lease-probe", wire.Fields{Op: wire.OpLeaseProbe}, func(h wire.Header) bool { return h.Op() == wire.OpLeaseProbe }},
		{"mode-x", wire.Fields{Mode: wire.Exclusive}, func(h wire.Header) bool { return h.Mode() == wire.Exclusive }},
		{"flags-all", wire.Fields{Flags: 0xff, Client: netip.AddrPortFrom(netip.IPv4Unspecified(), 0)}, func(h wire.Header) bool { return h.Flags() == 0xff && h.Has(wire.FlagTry|wire.FlagRetry) }},
		{"flag-try", wire.Fields{Flags: wire.FlagTry}, func(h wire.Header) bool { return h.Has(wire.FlagTry) && !h.Has(wire.FlagReply) }},
		{"status", wire.Fields{Op: wire.OpReject, Status: wire.StatusBadRequest}, func(h wire.Header) bool { return h.Status() == wire.StatusBadRequest }},
		{"admin-sub", wire.Fields{Op: wire.OpAdmin, Status: wire.AdminResetLock}, func(h wire.Header) bool { return h.Status() == wire.AdminResetLock }},
		{"priority", wire.Fields{Priority: 255}, func(h wire.Header) bool { return h.Priority() == 255 }},
		{"tenant", wire.Fields{Tenant: math.MaxUint16}, func(h wire.Header) bool { return h.Tenant() == math.MaxUint16 }},
		{"lock", wire.Fields{Lock: math.MaxUint32}, func(h wire.Header) bool { return h.Lock() == math.MaxUint32 }},
		{"txn", wire.Fields{Txn: math.MaxUint64}, func(h wire.Header) bool { return h.Txn() == math.MaxUint64 }},
		{"token", wire.Fields{Token: 1 << 63}, func(h wire.Header) bool { return h.Token() == 1<<63 }},
		{"timestamp", wire.Fields{Timestamp: 1}, func(h wire.Header) bool { return h.Timestamp() == 1 }},
		{"lease", wire.Fields{LeaseMicros: 5_000_000}, func(h wire.Header) bool { return h.LeaseMicros() == 5_000_000 }},
		{"client", wire.Fields{Flags: wire.FlagForwarded, Client: netip.MustParseAddrPort("10.1.2.3:4567")},
			func(h wire.Header) bool { return h.ClientAddr() == netip.MustParseAddrPort("10.1.2.3:4567") }},
		{"client-ip-only", wire.Fields{Client: netip.MustParseAddrPort("10.1.2.3:0")},
			func(h wire.Header) bool { return h.ClientIPRaw() == [4]byte{10, 1, 2, 3} && h.ClientPort() == 0 }},
		{"slots", wire.Fields{Op: wire.OpQueueEmpty, Slots: 65535}, func(h wire.Header) bool { return h.Slots() == 65535 }},
		{"full", full, func(h wire.Header) bool { return h.Txn() == full.Txn && h.Lock() == full.Lock }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, wire.Len)
			wire.Header(buf).Encode(&tt.f)
			h, err := wire.Parse(buf)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if h.Version() != wire.Version {
				t.Fatalf("version %d", h.Version())
			}
			if !tt.check(h) {
				t.Fatalf("accessor check failed for % x", buf)
			}
			var got wire.Fields
			h.Decode(&got)
			if got != tt.f {
				t.Fatalf("Decode:\n got %+v\nwant %+v", got, tt.f)
			}
			// Decode then Encode reproduces the bytes.
			again := wire.Append(nil, &got)
			if !bytes.Equal(again, buf) {
				t.Fatalf("re-encode:\n got % x\nwant % x", again, buf)
			}
		})
	}
}

func TestSetters(t *testing.T) {
	h := wire.Header(make([]byte, wire.Len))
	h.SetVersion(wire.Version)
	h.SetOp(wire.OpRelease)
	h.SetMode(wire.Exclusive)
	h.SetFlags(wire.FlagRetry)
	h.SetStatus(wire.StatusQuota)
	h.SetPriority(3)
	h.SetTenant(9)
	h.SetLock(10)
	h.SetTxn(11)
	h.SetToken(12)
	h.SetTimestamp(13)
	h.SetLeaseMicros(14)
	h.SetClientAddr(netip.MustParseAddrPort("127.0.0.1:15"))
	h.SetSlots(16)
	want := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Flags: wire.FlagRetry,
		Status: wire.StatusQuota, Priority: 3, Tenant: 9, Lock: 10, Txn: 11, Token: 12, Timestamp: 13,
		LeaseMicros: 14, Client: netip.MustParseAddrPort("127.0.0.1:15"), Slots: 16}
	var got wire.Fields
	h.Decode(&got)
	if got != want {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	h.SetClientPort(99)
	if h.ClientPort() != 99 {
		t.Fatalf("client port %d", h.ClientPort())
	}
}

func TestSetClientAddr(t *testing.T) {
	tests := []struct {
		in   string
		want [4]byte
		port uint16
	}{
		{"192.0.2.1:80", [4]byte{192, 0, 2, 1}, 80},
		{"[::ffff:192.0.2.1]:81", [4]byte{192, 0, 2, 1}, 81}, // mapped: unmapped
		{"[2001:db8::1]:82", [4]byte{}, 82},                  // IPv6: not representable, zero
	}
	for _, tt := range tests {
		h := wire.Header(bytes.Repeat([]byte{0xee}, wire.Len))
		h.SetClientAddr(netip.MustParseAddrPort(tt.in))
		if h.ClientIPRaw() != tt.want || h.ClientPort() != tt.port {
			t.Errorf("%s: got %v:%d, want %v:%d", tt.in, h.ClientIPRaw(), h.ClientPort(), tt.want, tt.port)
		}
	}
}

func TestValidateErrors(t *testing.T) {
	good := wire.Append(nil, &full)
	mut := func(off int, v byte) []byte {
		b := bytes.Clone(good)
		b[off] = v
		return b
	}
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"nil", nil, wire.ErrShort},
		{"empty", []byte{}, wire.ErrShort},
		{"one-byte", []byte{1}, wire.ErrShort},
		{"netlock-v0-20-bytes", make([]byte, 20), wire.ErrShort},
		{"one-short", good[:wire.Len-1], wire.ErrShort},
		{"version-0", mut(0, 0), wire.ErrVersion},
		{"version-2", mut(0, 2), wire.ErrVersion},
		{"version-255", mut(0, 255), wire.ErrVersion},
		{"op-9", mut(1, 9), wire.ErrOp},
		{"op-255", mut(1, 255), wire.ErrOp},
		{"mode-2", mut(2, 2), wire.ErrMode},
		{"mode-255", mut(2, 255), wire.ErrMode},
		{"version-before-op", func() []byte { b := mut(0, 9); b[1] = 200; return b }(), wire.ErrVersion},
		{"reserved-flags-ok", mut(3, 0xe0), nil},
		{"unknown-status-ok", mut(4, 200), nil},
		{"good", good, nil},
		{"trailing-bytes-ok", append(bytes.Clone(good), 1, 2, 3), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := wire.Header(tt.b).Validate()
			if !errors.Is(err, tt.want) {
				t.Fatalf("Validate: %v, want %v", err, tt.want)
			}
			h, err := wire.Parse(tt.b)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse: %v, want %v", err, tt.want)
			}
			if err != nil && h != nil {
				t.Fatalf("Parse returned a header with error %v", err)
			}
			if err == nil && len(h) != wire.Len {
				t.Fatalf("Parse: len %d, want %d", len(h), wire.Len)
			}
		})
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{wire.OpAcquire.String(), "acquire"},
		{wire.OpPushBack.String(), "push-back"},
		{wire.OpQueueEmpty.String(), "queue-empty"},
		{wire.OpLeaseProbe.String(), "lease-probe"},
		{wire.OpAdmin.String(), "admin"},
		{wire.Op(9).String(), "op(9)"},
		{wire.Shared.String(), "S"},
		{wire.Exclusive.String(), "X"},
		{wire.Mode(7).String(), "mode(7)"},
		{wire.StatusWouldBlock.String(), "would-block"},
		{wire.StatusBadRequest.String(), "bad-request"},
		{wire.StatusOverloaded.String(), "overloaded"},
		{wire.StatusWaitExpired.String(), "wait-expired"},
		{wire.Status(11).String(), "status(11)"},
		{wire.Flags(0).String(), ""},
		{(wire.FlagReply | wire.FlagRenewed).String(), "reply|renewed"},
		{wire.Flags(0xff).String(), "reply|retry|try|fwd|renewed|batch|0xc0"},
		{(&wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 2, Mode: wire.Exclusive}).String(),
			"acquire lock=1 txn=2 mode=X"},
		{(&wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing, Flags: wire.FlagReply, Slots: 4}).String(),
			"admin lock=0 txn=0 mode=S flags=reply admin=1 slots=4"},
		{full.String(), "grant lock=287454020 txn=2387509390608836392 mode=X flags=reply|fwd|renewed " +
			"status=not-owner prio=7 tenant=2571 token=3544952156018063160 lease=1364349780us " +
			"client=192.0.2.61:24930 slots=29042"},
	}
	for i, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("#%d: got %q, want %q", i, tt.got, tt.want)
		}
	}
	for o := wire.Op(0); o < 9; o++ {
		if !o.Valid() || strings.HasPrefix(o.String(), "op(") {
			t.Errorf("op %d: valid=%v name=%q", o, o.Valid(), o)
		}
	}
	if wire.Op(9).Valid() || wire.Mode(2).Valid() {
		t.Error("op 9 or mode 2 valid")
	}
}

// TestAllocs checks that the fast path (Parse, every accessor, Encode, Decode, the setters) does
// not allocate.
func TestAllocs(t *testing.T) {
	in := wire.Append(nil, &full)
	out := make([]byte, wire.Len)
	var f wire.Fields
	var sink uint64
	n := testing.AllocsPerRun(1000, func() {
		h, err := wire.Parse(in)
		if err != nil {
			panic(err)
		}
		sink += uint64(h.Version()) + uint64(h.Op()) + uint64(h.Mode()) + uint64(h.Flags()) +
			uint64(h.Status()) + uint64(h.Priority()) + uint64(h.Tenant()) + uint64(h.Lock()) +
			h.Txn() + h.Token() + h.Timestamp() + uint64(h.LeaseMicros()) +
			uint64(h.ClientPort()) + uint64(h.Slots())
		if h.Has(wire.FlagReply) && h.ClientAddr().IsValid() {
			sink++
		}
		ip := h.ClientIPRaw()
		sink += uint64(ip[0])
		h.Decode(&f)
		o := wire.Header(out)
		o.Encode(&f)
		o.SetOp(wire.OpRelease)
		o.SetFlags(o.Flags() | wire.FlagReply)
		o.SetClientAddr(f.Client)
		if err := wire.Header(out).Validate(); err != nil {
			panic(err)
		}
		// Errors are sentinels: rejecting bad input does not allocate either.
		if _, err := wire.Parse(in[:10]); err == nil {
			panic("short accepted")
		}
	})
	if n != 0 {
		t.Fatalf("allocs per run: %v, want 0", n)
	}
	if sink == 0 {
		t.Fatal("sink")
	}
}

func BenchmarkParseEncode(b *testing.B) {
	in := wire.Append(nil, &full)
	out := make([]byte, wire.Len)
	var f wire.Fields
	b.ReportAllocs()
	for b.Loop() {
		h, err := wire.Parse(in)
		if err != nil {
			b.Fatal(err)
		}
		h.Decode(&f)
		wire.Header(out).Encode(&f)
	}
}

// FuzzHeader checks that Parse never panics on any input, that it accepts exactly what Validate
// accepts, that an accepted header decodes and re-encodes to the same first 48 bytes, and that
// the gopacket layer agrees with Parse. The seed corpus is below and in testdata/fuzz/FuzzHeader.
func FuzzHeader(f *testing.F) {
	f.Add(wire.Append(nil, &full))
	f.Add(wire.Append(nil, &wire.Fields{}))
	f.Add(wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 1}))
	f.Add(wire.Append(nil, &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing, Flags: wire.FlagReply, Slots: 2}))
	f.Add(append(wire.Append(nil, &full), "trailing payload"...))
	f.Add([]byte{})
	f.Add(make([]byte, 20)) // a NetLock v0 header
	f.Add(bytes.Repeat([]byte{0xff}, wire.Len))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := wire.Parse(b)
		if verr := wire.Header(b).Validate(); !errors.Is(err, verr) {
			t.Fatalf("Parse %v, Validate %v", err, verr)
		}
		var l layer.NetLock
		lerr := l.DecodeFromBytes(b, nopFeedback{})
		if (err == nil) != (lerr == nil) {
			t.Fatalf("Parse %v, layer %v", err, lerr)
		}
		if err != nil {
			return
		}
		if len(h) != wire.Len {
			t.Fatalf("len %d", len(h))
		}
		var fs wire.Fields
		h.Decode(&fs)
		_ = fs.String()
		if fs != l.Fields {
			t.Fatalf("layer fields %+v, Decode %+v", l.Fields, fs)
		}
		again := wire.Append(nil, &fs)
		if !bytes.Equal(again, b[:wire.Len]) {
			t.Fatalf("re-encode:\n got % x\nwant % x", again, b[:wire.Len])
		}
	})
}

type nopFeedback struct{}

func (nopFeedback) SetTruncated() {}

func TestRackKeyTrailer(t *testing.T) {
	b := make([]byte, wire.ControlLen)
	wire.Header(b).Encode(&wire.Fields{Op: wire.OpQueueEmpty, Lock: 7})
	wire.SetRackKey(b, 0x0123456789abcdef)
	if k, ok := wire.RackKey(b); !ok || k != 0x0123456789abcdef {
		t.Fatalf("RackKey = %#x, %v", k, ok)
	}
	if _, ok := wire.RackKey(b[:wire.Len]); ok {
		t.Fatal("RackKey of a bare header: ok")
	}
	if _, ok := wire.RackKey(b[:wire.ControlLen-1]); ok {
		t.Fatal("RackKey of a truncated trailer: ok")
	}
	for op := wire.Op(0); op < 16; op++ {
		want := op == wire.OpPushBack || op == wire.OpOverflow || op == wire.OpQueueEmpty || op == wire.OpAdmin
		if op.IsControl() != want {
			t.Errorf("%v.IsControl() = %v", op, !want)
		}
	}
	if !wire.Status(16).IsSwitchAdmin() || !wire.Status(31).IsSwitchAdmin() || wire.Status(15).IsSwitchAdmin() || wire.Status(32).IsSwitchAdmin() {
		t.Error("IsSwitchAdmin range")
	}
	// Every switch admin sub-operation is in the switch range, and they are distinct.
	seen := map[wire.Status]bool{}
	for _, s := range []wire.Status{wire.AdminSwitchProbe, wire.AdminSwitchReset, wire.AdminSwitchForceRelease,
		wire.AdminSwitchTokenBase, wire.AdminSwitchGetCookie, wire.AdminSwitchSetCookie, wire.AdminSwitchSetBuffered} {
		if !s.IsSwitchAdmin() || seen[s] {
			t.Errorf("switch admin sub-operation %d: outside 16-31 or defined twice", s)
		}
		seen[s] = true
	}
	for _, s := range []wire.Status{wire.AdminPing, wire.AdminSweep, wire.AdminResetLock, wire.AdminRDMAJoin, wire.AdminRDMAPeer} {
		if s.IsSwitchAdmin() {
			t.Errorf("server admin sub-operation %d in the switch range", s)
		}
	}
}
