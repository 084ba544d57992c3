package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/front"
)

func load(t testing.TB, path string, cfg Config) *Switch {
	t.Helper()
	checked, err := front.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Now == nil {
		now := time.Unix(0, 0)
		cfg.Now = func() time.Time { now = now.Add(time.Microsecond); return now }
	}
	sw, err := Load(checked, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

func miscPkt(op, a byte) []byte { return []byte{op, a, 0, 0, 0, 0, 0, 0} }

func TestDigestLogRandom(t *testing.T) {
	var got []Digest
	var logs []string
	sw := load(t, "testdata/misc.p4", Config{
		OnDigest: func(d Digest) { got = append(got, d) },
		Log:      func(s string) { logs = append(logs, s) },
		Random:   func() uint64 { return 57 },
	})
	res, err := sw.Process(3, miscPkt(1, 0x42))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Digests) != 1 || len(got) != 1 {
		t.Fatalf("digests %v / callback %v, want one", res.Digests, got)
	}
	d := got[0]
	if d.ID == 0 || d.ID != sw.DigestID("learn_t") {
		t.Errorf("digest id %d, want the P4Info id %d", d.ID, sw.DigestID("learn_t"))
	}
	if d.Receiver != 1 || len(d.Fields) != 2 || !bytes.Equal(d.Fields[0], []byte{0x42}) || !bytes.Equal(d.Fields[1], []byte{0, 3}) {
		t.Errorf("digest = %+v", d)
	}
	if len(logs) != 1 || logs[0] != "a=66 port=3" {
		t.Errorf("log_msg output %q", logs)
	}
	res, err = sw.Process(3, miscPkt(2, 1))
	if err != nil {
		t.Fatal(err)
	}
	// random(100, 200) with a source returning 57: 100 + 57 % 101.
	if len(res.Out) != 1 || binary.BigEndian.Uint16(res.Out[0].Data[2:]) != 157 {
		t.Errorf("random output %X", res.Out)
	}
}

// TestOnTable: the table hook reports every application with its action and hit or miss, and
// costs nothing when unset (TestSteadyStateAllocs runs without it).
func TestOnTable(t *testing.T) {
	var lines []string
	sw := load(t, "testdata/l3.p4", Config{OnTable: func(table, action string, hit bool) {
		lines = append(lines, fmt.Sprintf("%s %s %v", table, action, hit))
	}})
	pkt := ipv4Packet(0x0a010203, 64)
	if _, err := sw.Process(1, pkt); err != nil {
		t.Fatal(err)
	}
	tbl, _ := sw.Table("ipv4_lpm")
	if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{10, 0, 0, 0}, PrefixLen: 8}}, Action: "set_nhop", Args: [][]byte{{1}, {2}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Process(1, pkt); err != nil {
		t.Fatal(err)
	}
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "MyIngress.ipv4_lpm ") || !strings.HasSuffix(lines[0], " false") ||
		lines[1] != "MyIngress.ipv4_lpm MyIngress.set_nhop true" {
		t.Fatalf("table events %q: want a miss, then a hit running set_nhop", lines)
	}
}

func TestAssert(t *testing.T) {
	sw := load(t, "testdata/misc.p4", Config{})
	_, err := sw.Process(0, miscPkt(2, 0))
	if !errors.Is(err, ErrAssert) || !strings.Contains(err.Error(), "misc.p4:") {
		t.Fatalf("err = %v, want ErrAssert with the position", err)
	}
	// The switch keeps working after a failed assertion.
	if _, err := sw.Process(0, miscPkt(2, 1)); err != nil {
		t.Fatal(err)
	}
}

func TestTofinoConstraints(t *testing.T) {
	tests := []struct {
		op      byte
		wantErr bool
	}{
		{3, false},  // one read-modify-write of one cell in an action
		{4, true},   // two reads of one register (two cells) in one action
		{5, true},   // the same register in two actions of one pass
		{0, false},  // no register access
		{8, true},   // read and write in an apply block: two register actions
		{9, true},   // two reads of one cell at different places in one action
		{10, true},  // read, write, write of one cell in one action
		{11, false}, // write then read of one cell: one register action returning the new value
		{12, false}, // read in an action called from the action that writes: inlined, one action
		{13, true},  // one register used by ingress and egress
		{14, true},  // read in an action, write of the same cell in the apply block after it
	}
	for _, tt := range tests {
		sw := load(t, "testdata/misc.p4", Config{TofinoConstraints: true})
		_, err := sw.Process(0, miscPkt(tt.op, 1))
		if (err != nil) != tt.wantErr {
			t.Errorf("op %d: err = %v, want error %v", tt.op, err, tt.wantErr)
		}
		if err != nil && (!errors.Is(err, ErrTofinoConstraint) || strings.Count(err.Error(), "misc.p4:") != 2) {
			t.Errorf("op %d: err = %v, want both places named", tt.op, err)
		}
		// Without the mode the same packets run.
		sw = load(t, "testdata/misc.p4", Config{})
		if _, err := sw.Process(0, miscPkt(tt.op, 1)); err != nil {
			t.Errorf("op %d without tofino mode: %v", tt.op, err)
		}
	}
}

func ipv4Packet(dst uint32, ttl byte) []byte {
	p := make([]byte, 14+20+4)
	copy(p, []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0xaa, 0x08, 0x00})
	ip := p[14:34]
	ip[0], ip[8], ip[9] = 0x45, ttl, 17
	binary.BigEndian.PutUint16(ip[2:], 24)
	binary.BigEndian.PutUint32(ip[12:], 0x0a000001)
	binary.BigEndian.PutUint32(ip[16:], dst)
	binary.BigEndian.PutUint16(ip[10:], csum16(ip))
	return p
}

func TestRuntimeAPI(t *testing.T) {
	sw := load(t, "testdata/l3.p4", Config{})
	tbl, err := sw.Table("ipv4_lpm")
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Name != "MyIngress.ipv4_lpm" || tbl.ID == 0 {
		t.Fatalf("table %q id %d", tbl.Name, tbl.ID)
	}
	byID, err := sw.TableByID(tbl.ID)
	if err != nil || byID != tbl {
		t.Fatalf("TableByID: %v", err)
	}
	var setNhop *Action
	for _, a := range tbl.Actions() {
		if a.Name == "MyIngress.set_nhop" {
			setNhop = a
		}
	}
	if setNhop == nil || setNhop.ID == 0 || len(setNhop.Params) != 2 || setNhop.Params[1].Width != 9 {
		t.Fatalf("set_nhop action: %+v", setNhop)
	}
	e := Entry{
		Match:    []FieldMatch{{Name: "hdr.ipv4.dstAddr", Value: []byte{10, 0, 0, 0}, PrefixLen: 8}},
		ActionID: setNhop.ID,
		Args:     [][]byte{{0, 0, 0, 0, 0, 7}, {0, 4}},
	}
	if err := tbl.Insert(e); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(e); !errors.Is(err, ErrAlreadyExists) {
		t.Errorf("duplicate insert: %v", err)
	}
	res, err := sw.Process(1, ipv4Packet(0x0a010203, 64))
	if err != nil || len(res.Out) != 1 || res.Out[0].Port != 4 {
		t.Fatalf("out %v err %v", res.Out, err)
	}
	e.Args = [][]byte{{0, 0, 0, 0, 0, 8}, {0, 5}}
	if err := tbl.Modify(e); err != nil {
		t.Fatal(err)
	}
	res, _ = sw.Process(1, ipv4Packet(0x0a010203, 64))
	if len(res.Out) != 1 || res.Out[0].Port != 5 {
		t.Fatalf("after modify: %v", res.Out)
	}
	ents := tbl.Entries()
	if len(ents) != 1 || ents[0].Packets != 2 || ents[0].Bytes != 2*38 || ents[0].Action != "MyIngress.set_nhop" {
		t.Errorf("entries %+v", ents)
	}
	if got, err := tbl.Lookup(Entry{Match: e.Match}); err != nil || got.Packets != 2 {
		t.Errorf("Lookup = %+v, %v", got, err)
	}
	if err := tbl.SetDirectCounter(Entry{Match: e.Match}, 7, 70); err != nil {
		t.Fatal(err)
	}
	if got, _ := tbl.Lookup(Entry{Match: e.Match}); got.Packets != 7 || got.Bytes != 70 {
		t.Errorf("after SetDirectCounter: %+v", got)
	}
	if err := tbl.Delete(e); err != nil {
		t.Fatal(err)
	}
	res, _ = sw.Process(1, ipv4Packet(0x0a010203, 64))
	if len(res.Out) != 0 {
		t.Errorf("after delete: %v", res.Out)
	}
	if err := tbl.Delete(e); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if err := tbl.SetDefault("set_nhop", 0, [][]byte{{0, 0, 0, 0, 0, 9}, {0, 6}}); err != nil {
		t.Fatal(err)
	}
	res, _ = sw.Process(1, ipv4Packet(0x0b000001, 64))
	if len(res.Out) != 1 || res.Out[0].Port != 6 {
		t.Errorf("default action: %v", res.Out)
	}
	if name, args := tbl.Default(); name != "MyIngress.set_nhop" || len(args) != 2 || args[1][1] != 6 {
		t.Errorf("Default() = %s %v", name, args)
	}
	tbl.ResetDefault()
	if name, _ := tbl.Default(); name != "MyIngress.drop" {
		t.Errorf("after ResetDefault: %s", name)
	}
	if err := tbl.Insert(Entry{Action: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown action: %v", err)
	}
}

func TestSteadyStateAllocs(t *testing.T) {
	sw := load(t, "testdata/l3.p4", Config{})
	tbl, _ := sw.Table("ipv4_lpm")
	if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{10, 0, 0, 0}, PrefixLen: 8}}, Action: "set_nhop", Args: [][]byte{{1}, {2}}}); err != nil {
		t.Fatal(err)
	}
	pkt := ipv4Packet(0x0a010203, 64)
	sw.Process(1, pkt)
	n := testing.AllocsPerRun(200, func() {
		res, err := sw.Process(1, pkt)
		if err != nil || len(res.Out) != 1 {
			t.Fatalf("%v %v", res, err)
		}
	})
	if n != 0 {
		t.Errorf("allocs per packet = %v, want 0", n)
	}
}

func TestU128(t *testing.T) {
	a := u128{lo: ^uint64(0)}
	if s := a.add(u128{lo: 1}); s != (u128{0, 1}) {
		t.Errorf("carry: %v", s)
	}
	if s := (u128{0, 1}).sub(u128{lo: 1}); s != a {
		t.Errorf("borrow: %v", s)
	}
	if s := (u128{lo: 1}).shl(100).shr(100); s != (u128{lo: 1}) {
		t.Errorf("shift: %v", s)
	}
	if scmp(u128{lo: 0xff}, u128{lo: 1}, 8) >= 0 {
		t.Error("int<8> -1 < 1")
	}
	if v := (u128{lo: 0x80}).sext(8); v.hi != ^uint64(0) {
		t.Errorf("sext: %v", v)
	}
	b := []byte{0, 0, 0}
	writeBits(b, 3, 9, u128{lo: 0x1ff})
	if got := readBits(b, 3, 9); got.lo != 0x1ff || b[0] != 0x1f || b[1] != 0xf0 {
		t.Errorf("bits: %X %v", b, got)
	}
}

func TestHashes(t *testing.T) {
	// Reference values: CRC-16/ARC("123456789") = 0xBB3D; RFC 1071 example words.
	if c := crc16([]byte("123456789")); c != 0xBB3D {
		t.Errorf("crc16 = %#x", c)
	}
	if c := csum16([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); c != ^uint16(0xddf2) {
		t.Errorf("csum16 = %#x", c)
	}
}

func FuzzProcess(f *testing.F) {
	checked, err := front.Load("testdata/l3.p4")
	if err != nil {
		f.Fatal(err)
	}
	sw, err := Load(checked, Config{})
	if err != nil {
		f.Fatal(err)
	}
	tbl, _ := sw.Table("ipv4_lpm")
	_ = tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{10, 0, 0, 0}, PrefixLen: 8}}, Action: "set_nhop", Args: [][]byte{{1}, {2}}})
	f.Add(ipv4Packet(0x0a000001, 5))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := sw.Process(1, b)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range res.Out {
			if len(o.Data) != len(b) {
				t.Fatalf("router changed the length: %d -> %d", len(b), len(o.Data))
			}
		}
	})
}

func benchSwitch(b *testing.B, path string, setup func(*Switch), pkt []byte) {
	sw := load(b, path, Config{})
	setup(sw)
	if res, err := sw.Process(1, pkt); err != nil || len(res.Out) != 1 {
		b.Fatalf("warm-up: %v %v", res, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sw.Process(1, pkt)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pkts/s")
}

// BenchmarkL3 routes one IPv4 packet through parser, checksum verify, LPM over 64 routes,
// TTL decrement, checksum update and deparser.
func BenchmarkL3(b *testing.B) {
	benchSwitch(b, "testdata/l3.p4", func(sw *Switch) {
		tbl, _ := sw.Table("ipv4_lpm")
		for i := 0; i < 64; i++ {
			if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{10, byte(i), 0, 0}, PrefixLen: 16}}, Action: "set_nhop", Args: [][]byte{{byte(i)}, {2}}}); err != nil {
				b.Fatal(err)
			}
		}
	}, ipv4Packet(0x0a200203, 64))
}

// BenchmarkRegisters runs the queue program: two register reads, two register writes (or a
// read and a write of the slot array) and a counter on every packet.
func BenchmarkRegisters(b *testing.B) {
	pkt := make([]byte, 17)
	pkt[4] = 7
	benchSwitch(b, "testdata/regs.p4", func(*Switch) {}, pkt)
}

// refRead and refWrite are bit-at-a-time reference implementations.
func refRead(b []byte, off, w int) u128 {
	var v u128
	for k := 0; k < w; k++ {
		p := off + k
		v = v.shl(1).or(u128{lo: uint64(b[p>>3]>>(7-uint(p&7))) & 1})
	}
	return v
}

func FuzzBits(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, uint8(3), uint8(77), uint64(0x123456789), uint64(7))
	f.Fuzz(func(t *testing.T, b []byte, off, w uint8, lo, hi uint64) {
		width := int(w)%128 + 1
		o := int(off) % 16
		if len(b)*8 < o+width {
			return
		}
		if got, want := readBits(b, o, width), refRead(b, o, width); got != want {
			t.Fatalf("readBits(%X, %d, %d) = %v, want %v", b, o, width, got, want)
		}
		v := u128{lo, hi}.trunc(width)
		c := append([]byte(nil), b...)
		writeBits(c, o, width, v)
		if got := refRead(c, o, width); got != v {
			t.Fatalf("writeBits then read = %v, want %v", got, v)
		}
		if o > 0 && refRead(c, 0, o) != refRead(b, 0, o) {
			t.Fatal("writeBits changed bits before the field")
		}
		if end := o + width; len(b)*8 > end && refRead(c, end, len(b)*8-end) != refRead(b, end, len(b)*8-end) {
			t.Fatal("writeBits changed bits after the field")
		}
		if o == 0 {
			r := bitReader{b: b}
			if got := r.get(width); got != refRead(b, 0, width) {
				t.Fatalf("bitReader = %v", got)
			}
			bw := bitWriter{}
			bw.put(width, v)
			out := bw.flush()
			if got := refRead(out, 0, width); got != v {
				t.Fatalf("bitWriter = %v, want %v", got, v)
			}
		}
	})
}

func TestCloneSessionReplicasAndPRE(t *testing.T) {
	sw := load(t, "testdata/l3.p4", Config{})
	sw.SetMulticastGroup(3, []Replica{{Port: 1, Rid: 10}, {Port: 2, Rid: 11}})
	sw.SetCloneSession(9, CloneSession{Replicas: []Replica{{Port: 4, Rid: 1}}, TruncateLen: 8})
	other := load(t, "testdata/l3.p4", Config{})
	other.CopyPRE(sw)
	rs, ok := other.MulticastGroup(3)
	if !ok || len(rs) != 2 || rs[1] != (Replica{Port: 2, Rid: 11}) {
		t.Errorf("copied group: %v", rs)
	}
	if sess := other.CloneSessions()[9]; len(sess.Replicas) != 1 || sess.TruncateLen != 8 {
		t.Errorf("copied session: %+v", sess)
	}
}

func TestTimestampFromInjectedClock(t *testing.T) {
	now := time.Unix(500, 0)
	sw := load(t, "testdata/misc.p4", Config{Now: func() time.Time { return now }})
	var got []uint32
	for _, step := range []time.Duration{0, 1500 * time.Microsecond, time.Second} {
		now = now.Add(step)
		res, err := sw.Process(0, miscPkt(6, 0))
		if err != nil || len(res.Out) != 1 {
			t.Fatalf("%v %v", res, err)
		}
		got = append(got, binary.BigEndian.Uint32(res.Out[0].Data[4:]))
	}
	// Microseconds since the switch was loaded, as bmv2 counts them from its start.
	if got[0] != 0 || got[1] != 1500 || got[2] != 1001500 {
		t.Errorf("timestamps %v", got)
	}
}

// TestOneClockReadPerPacket: a Process call reads the injected clock once, whatever the packet
// does (ingress and egress passes, a direct meter), and uses that instant throughout; outside
// Process (a meter configured by the control plane) the clock is read afresh.
func TestOneClockReadPerPacket(t *testing.T) {
	reads := 0
	now := time.Unix(500, 0)
	sw := load(t, "testdata/misc.p4", Config{Now: func() time.Time { reads++; now = now.Add(time.Millisecond); return now }})
	tbl, key := meteredEntry(t, sw)
	reads = 0
	if err := tbl.SetMeter(Entry{Match: key.Match}, MeterConfig{CIR: 1e-9, CBS: 3, PIR: 1e-9, PBS: 1}); err != nil {
		t.Fatal(err)
	}
	if reads != 1 {
		t.Errorf("configuring a meter read the clock %d times, want 1", reads)
	}
	for _, pkt := range [][]byte{miscPkt(6, 0), miscPkt(7, 9), miscPkt(13, 0)} {
		reads = 0
		if _, err := sw.Process(0, pkt); err != nil {
			t.Fatal(err)
		}
		if reads != 1 {
			t.Errorf("op %d: Process read the clock %d times, want 1", pkt[0], reads)
		}
	}
	// The timestamp is that reading: 1 ms per reading since Load's (the switch's start), here
	// the sixth reading (Load's, the meter's, three packets, this one).
	res, err := sw.Process(0, miscPkt(6, 0))
	if err != nil || len(res.Out) != 1 {
		t.Fatalf("%v %v", res, err)
	}
	if got := binary.BigEndian.Uint32(res.Out[0].Data[4:]); got != 5000 {
		t.Errorf("timestamp %d µs, want 5000", got)
	}
}

// meteredEntry inserts misc.p4's metered entry for key 9 (action colour, a direct meter).
func meteredEntry(t *testing.T, sw *Switch) (*Table, Entry) {
	t.Helper()
	tbl, err := sw.Table("metered")
	if err != nil {
		t.Fatal(err)
	}
	key := Entry{Match: []FieldMatch{{Value: []byte{9}}}, Action: "colour"}
	if err := tbl.Insert(key); err != nil {
		t.Fatal(err)
	}
	return tbl, key
}

func TestDirectMeter(t *testing.T) {
	sw := load(t, "testdata/misc.p4", Config{})
	tbl, key := meteredEntry(t, sw)
	colours := func(n int) []byte {
		var out []byte
		for i := 0; i < n; i++ {
			res, err := sw.Process(0, miscPkt(7, 9))
			if err != nil || len(res.Out) != 1 {
				t.Fatalf("%v %v", res, err)
			}
			out = append(out, res.Out[0].Data[1])
		}
		return out
	}
	if got := colours(2); !bytes.Equal(got, []byte{Green, Green}) {
		t.Errorf("unconfigured meter: %v", got)
	}
	// bmv2's order: the peak bucket (burst 1) first, then the committed bucket (burst 3);
	// negligible rates: green, then red (the peak bucket empty, nothing consumed) for good.
	if err := tbl.SetMeter(Entry{Match: key.Match}, MeterConfig{CIR: 1e-9, CBS: 3, PIR: 1e-9, PBS: 1}); err != nil {
		t.Fatal(err)
	}
	if got := colours(4); !bytes.Equal(got, []byte{Green, Red, Red, Red}) {
		t.Errorf("configured meter: %v", got)
	}
	if cfg, err := tbl.DirectMeter(Entry{Match: key.Match}); err != nil || cfg == nil || cfg.PBS != 1 {
		t.Errorf("DirectMeter = %+v, %v", cfg, err)
	}
}

func TestExternParameter(t *testing.T) {
	sw := load(t, "testdata/misc.p4", Config{})
	for want := uint32(10); want <= 30; want += 10 {
		res, err := sw.Process(0, miscPkt(8, 0))
		if err != nil || len(res.Out) != 1 {
			t.Fatalf("%v %v", res, err)
		}
		if got := binary.BigEndian.Uint32(res.Out[0].Data[4:]); got != want {
			t.Errorf("value %d, want %d", got, want)
		}
	}
	r, err := sw.Register("regs")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := r.Read(7); binary.BigEndian.Uint32(b) != 30 {
		t.Errorf("regs[7] = %X", b)
	}
}

func TestMulticastAllocs(t *testing.T) {
	sw := load(t, "../stf/testdata/pre.p4", Config{})
	sw.SetMulticastGroup(7, []Replica{{Port: 5, Rid: 1}, {Port: 6, Rid: 1}, {Port: 8, Rid: 2}})
	sw.SetCloneSession(5, CloneSession{Port: 3, HasPort: true})
	sw.SetCloneSession(6, CloneSession{Port: 4, HasPort: true})
	mc := []byte{4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0xbb}
	clone := []byte{3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xaa, 0xbb}
	for _, tt := range []struct {
		pkt  []byte
		outs int
	}{{mc, 4}, {clone, 2}} {
		sw.Process(0, tt.pkt)
		n := testing.AllocsPerRun(100, func() {
			res, err := sw.Process(0, tt.pkt)
			if err != nil || len(res.Out) != tt.outs {
				t.Fatalf("%v %v", res, err)
			}
		})
		if n != 0 {
			t.Errorf("op %d: allocs per packet = %v, want 0", tt.pkt[0], n)
		}
	}
}

func TestActionProfiles(t *testing.T) {
	sw := load(t, "testdata/profile.p4", Config{})
	sel, err := sw.Profile("sel")
	if err != nil || !sel.Selector || sel.ID == 0 {
		t.Fatalf("selector %+v %v", sel, err)
	}
	for i := uint32(0); i < 3; i++ {
		if err := sel.SetMember(10+i, "set_out", [][]byte{{byte(0xA0 + i)}, {0, byte(2 + i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := sel.SetGroup(1, []uint32{12, 10, 11}); err != nil {
		t.Fatal(err)
	}
	ecmp, _ := sw.Table("ecmp")
	if err := ecmp.Insert(Entry{Match: []FieldMatch{{Value: []byte{5}}}, GroupID: 1, HasGroup: true}); err != nil {
		t.Fatal(err)
	}
	// identity hash of the 16-bit flow, modulo 3 members in id order (10, 11, 12).
	for flow := 0; flow < 9; flow++ {
		res, err := sw.Process(0, []byte{5, 0, byte(flow), 0})
		if err != nil || len(res.Out) != 1 {
			t.Fatalf("%v %v", res, err)
		}
		k := flow % 3
		if o := res.Out[0]; o.Data[3] != byte(0xA0+k) || o.Port != 2+k {
			t.Errorf("flow %d -> %X on port %d, want member %d", flow, o.Data, o.Port, 10+k)
		}
	}
	if err := sel.DeleteMember(10); !errors.Is(err, ErrInvalid) {
		t.Errorf("deleting a member in use: %v", err)
	}
	prof, err := sw.Profile("prof_action_profile")
	if err != nil {
		t.Fatal(err)
	}
	if err := prof.SetMember(1, "set_out", [][]byte{{0x77}, {0, 9}}); err != nil {
		t.Fatal(err)
	}
	pt, _ := sw.Table("prof")
	if err := pt.Insert(Entry{Match: []FieldMatch{{Value: []byte{200}}}, MemberID: 1, HasMember: true}); err != nil {
		t.Fatal(err)
	}
	if err := pt.Insert(Entry{Match: []FieldMatch{{Value: []byte{201}}}, GroupID: 1, HasGroup: true}); !errors.Is(err, ErrInvalid) {
		t.Errorf("group in an action profile: %v", err)
	}
	res, _ := sw.Process(0, []byte{200, 0, 0, 0})
	if len(res.Out) != 1 || res.Out[0].Port != 9 || res.Out[0].Data[3] != 0x77 {
		t.Errorf("profile member: %v", res.Out)
	}
	// A member deleted after use: the entry falls back to the default action.
	if err := prof.DeleteMember(1); err != nil {
		t.Fatal(err)
	}
	res, _ = sw.Process(0, []byte{200, 0, 0, 0})
	if len(res.Out) != 1 || res.Out[0].Port != 1 {
		t.Errorf("after member delete: %v", res.Out)
	}
}

func TestPacketInOut(t *testing.T) {
	var ins [][]byte
	sw := load(t, "testdata/l3.p4", Config{CPUPort: 64, OnPacketIn: func(f []byte) { ins = append(ins, append([]byte(nil), f...)) }})
	tbl, _ := sw.Table("ipv4_lpm")
	// Route 10/8 to the CPU port, 11/8 to port 3.
	if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{10, 0, 0, 0}, PrefixLen: 8}}, Action: "set_nhop", Args: [][]byte{{1}, {0, 64}}}); err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{11, 0, 0, 0}, PrefixLen: 8}}, Action: "set_nhop", Args: [][]byte{{1}, {0, 3}}}); err != nil {
		t.Fatal(err)
	}
	res, err := sw.Process(1, ipv4Packet(0x0a000001, 9))
	if err != nil || len(res.Out) != 0 || len(res.PacketIn) != 1 || len(ins) != 1 {
		t.Fatalf("packet-in: out %v in %d cb %d err %v", res.Out, len(res.PacketIn), len(ins), err)
	}
	res, err = sw.PacketOut(ipv4Packet(0x0b000001, 9))
	if err != nil || len(res.Out) != 1 || res.Out[0].Port != 3 {
		t.Fatalf("packet-out: %v %v", res, err)
	}
	if sw := load(t, "testdata/l3.p4", Config{}); sw != nil {
		if _, err := sw.PacketOut([]byte{1}); !errors.Is(err, ErrInvalid) {
			t.Errorf("PacketOut without a CPU port: %v", err)
		}
	}
}

func TestMeterRefill(t *testing.T) {
	var m meterState
	m.set(MeterConfig{CIR: 0.5, CBS: 2, PIR: 1, PBS: 4}, 0)
	steps := []struct {
		at   uint64
		want uint64
	}{
		{0, Green}, {0, Green}, {0, Yellow}, // committed bucket (2) exhausted
		{4, Green}, {4, Green}, // 4 us at 0.5/us: 2 committed tokens; peak had 2 left + 4 (capped at 4)
		{4, Yellow},
		{5, Yellow}, // 0.5 token: still short (whole tokens, as bmv2)
		{6, Green},
	}
	for i, s := range steps {
		if got := m.execute(s.at, false, 64); got != s.want {
			t.Errorf("step %d at %d us: colour %d, want %d", i, s.at, got, s.want)
		}
	}
	// Byte meters charge the packet length.
	var b meterState
	b.set(MeterConfig{CIR: 1, CBS: 100, PIR: 1, PBS: 150}, 0)
	if got := b.execute(0, true, 120); got != Yellow {
		t.Errorf("120 bytes against a committed burst of 100: %d", got)
	}
}

// TestIndexedTablesAgainstReference inserts and deletes random routes and exact entries and
// checks every lookup against a brute-force reference.
func TestIndexedTablesAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sw := load(t, "testdata/l3.p4", Config{})
	tbl, _ := sw.Table("ipv4_lpm")
	type route struct {
		addr uint32
		plen int
		port int
	}
	routes := map[[2]uint32]route{}
	key := func(a uint32, n int) uint32 {
		if n == 0 {
			return 0
		}
		return a &^ (1<<(32-uint(n)) - 1)
	}
	for step := 0; step < 3000; step++ {
		n := []int{0, 8, 16, 20, 24, 32}[rng.IntN(6)]
		a := key(0x0a000000|rng.Uint32()&0x00ff00ff, n)
		k := [2]uint32{a, uint32(n)}
		e := Entry{Match: []FieldMatch{{Value: binary.BigEndian.AppendUint32(nil, a), PrefixLen: n}}}
		if _, ok := routes[k]; ok && rng.IntN(2) == 0 {
			if err := tbl.Delete(e); err != nil {
				t.Fatalf("delete %x/%d: %v", a, n, err)
			}
			delete(routes, k)
		} else if !ok {
			port := 1 + rng.IntN(200)
			e.Action, e.Args = "set_nhop", [][]byte{{1}, {byte(port >> 8), byte(port)}}
			if err := tbl.Insert(e); err != nil {
				t.Fatalf("insert %x/%d: %v", a, n, err)
			}
			routes[k] = route{a, n, port}
		}
		if step%10 != 0 {
			continue
		}
		dst := 0x0a000000 | rng.Uint32()&0x00ff00ff
		want, best := -1, -1
		for _, r := range routes {
			if key(dst, r.plen) == r.addr && r.plen > best {
				want, best = r.port, r.plen
			}
		}
		res, err := sw.Process(1, ipv4Packet(dst, 64))
		if err != nil {
			t.Fatal(err)
		}
		got := -1
		if len(res.Out) == 1 {
			got = res.Out[0].Port
		}
		if got != want {
			t.Fatalf("step %d: %x -> port %d, want %d (%d routes)", step, dst, got, want, len(routes))
		}
	}
	if len(tbl.Entries()) != len(routes) {
		t.Errorf("%d entries, want %d", len(tbl.Entries()), len(routes))
	}

	// An exact table (tables.p4 t_exact: k1, k2; default writes 0xEE).
	sw = load(t, "../stf/testdata/tables.p4", Config{})
	ex, _ := sw.Table("t_exact")
	vals := map[[2]byte]byte{}
	for step := 0; step < 3000; step++ {
		k := [2]byte{byte(rng.IntN(16)), byte(rng.IntN(16))}
		e := Entry{Match: []FieldMatch{{Value: []byte{k[0]}}, {Value: []byte{0, k[1]}}}}
		if _, ok := vals[k]; ok {
			if rng.IntN(2) == 0 {
				if err := ex.Delete(e); err != nil {
					t.Fatal(err)
				}
				delete(vals, k)
			} else {
				v := byte(rng.IntN(200))
				e.Action, e.Args = "set_exact", [][]byte{{v}}
				if err := ex.Modify(e); err != nil {
					t.Fatal(err)
				}
				vals[k] = v
			}
		} else {
			v := byte(rng.IntN(200))
			e.Action, e.Args = "set_exact", [][]byte{{v}}
			if err := ex.Insert(e); err != nil {
				t.Fatal(err)
			}
			vals[k] = v
		}
		q := [2]byte{byte(rng.IntN(16)), byte(rng.IntN(16))}
		res, err := sw.Process(0, []byte{q[0], 0, q[1], 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		if err != nil || len(res.Out) != 1 {
			t.Fatalf("%v %v", res, err)
		}
		want, ok := vals[q]
		if !ok {
			want = 0xEE
		}
		if got := res.Out[0].Data[7]; got != want {
			t.Fatalf("step %d: key %v -> %#x, want %#x", step, q, got, want)
		}
	}
}

// TestOneKeyExactAgainstReference: one-key exact tables (the one-key lookup of Table.search)
// under random inserts, modifies and deletes agree with a map, for a 16-bit key and a 96-bit
// key whose values sometimes fit 64 bits and sometimes do not.
func TestOneKeyExactAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	sw := load(t, "testdata/exact1.p4", Config{})
	for sel, name := range []string{"t16", "t96"} {
		tbl, err := sw.Table(name)
		if err != nil {
			t.Fatal(err)
		}
		width := []int{2, 12}[sel]
		key := func() []byte {
			b := make([]byte, width)
			b[width-1] = byte(rng.IntN(8))
			if width == 12 && rng.IntN(2) == 0 {
				b[rng.IntN(4)] = byte(1 + rng.IntN(2)) // above the low 64 bits
			}
			return b
		}
		vals := map[string]byte{}
		for step := 0; step < 3000; step++ {
			k := key()
			e := Entry{Match: []FieldMatch{{Value: k}}}
			v := byte(rng.IntN(200))
			switch _, ok := vals[string(k)]; {
			case ok && rng.IntN(2) == 0:
				if err := tbl.Delete(e); err != nil {
					t.Fatal(err)
				}
				delete(vals, string(k))
			case ok:
				e.Action, e.Args = "set", [][]byte{{v}}
				if err := tbl.Modify(e); err != nil {
					t.Fatal(err)
				}
				vals[string(k)] = v
			default:
				e.Action, e.Args = "set", [][]byte{{v}}
				if err := tbl.Insert(e); err != nil {
					t.Fatal(err)
				}
				vals[string(k)] = v
			}
			q := key()
			pkt := make([]byte, 16)
			pkt[0] = byte(sel)
			if sel == 0 {
				copy(pkt[1:3], q)
			} else {
				copy(pkt[3:15], q)
			}
			res, err := sw.Process(0, pkt)
			if err != nil || len(res.Out) != 1 {
				t.Fatalf("%v %v", res, err)
			}
			want, ok := vals[string(q)]
			if !ok {
				want = 0xEE
			}
			if got := res.Out[0].Data[15]; got != want {
				t.Fatalf("%s step %d: key %x -> %#x, want %#x", name, step, q, got, want)
			}
		}
	}
}

func TestConstEntriesReadBack(t *testing.T) {
	sw := load(t, "../stf/testdata/tables.p4", Config{})
	tbl, _ := sw.Table("t_const")
	ents := tbl.Entries()
	if len(ents) != 3 || !tbl.ConstEntries() {
		t.Fatalf("entries %d const %v", len(ents), tbl.ConstEntries())
	}
	e := ents[0] // (0x01 &&& 0x0F, 0 .. 100): set_const(1), the highest priority
	if e.Action != "I.set_const" || !bytes.Equal(e.Args[0], []byte{1}) ||
		!bytes.Equal(e.Match[0].Value, []byte{1}) || !bytes.Equal(e.Match[0].Mask, []byte{0x0f}) ||
		!bytes.Equal(e.Match[1].Low, []byte{0, 0}) || !bytes.Equal(e.Match[1].High, []byte{0, 100}) {
		t.Errorf("first const entry %+v", e)
	}
	if err := tbl.Insert(Entry{}); !errors.Is(err, ErrConstTable) {
		t.Errorf("insert into a const table: %v", err)
	}
}

// TestRegisterWidths: registers in each storage class (cells of at most 32, at most 64 and up
// to 128 bits) keep what the program and the control plane write, truncated to the width, read
// 0 out of range and ignore writes out of range; on the closures' fast paths (Tofino-constraint
// mode off) and general paths (on), through Read/Write, and Reset clears them.
func TestRegisterWidths(t *testing.T) {
	regs := []struct {
		name  string
		width int
		op    byte
	}{{"r8", 8, 0}, {"r32", 32, 2}, {"r33", 33, 4}, {"r64", 64, 6}, {"r65", 65, 8}, {"r128", 128, 10}}
	all := [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	val := [16]byte{0x81, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x89, 0x0a, 0x0b, 0x0c, 0x8d, 0x0e, 0x0f, 0x10}
	trunc := func(v [16]byte, w int) u128 { return fromBytes(v[:]).trunc(w) }
	for _, tofino := range []bool{false, true} {
		sw := load(t, "testdata/regwidths.p4", Config{TofinoConstraints: tofino})
		run := func(op byte, idx uint16, v [16]byte) u128 {
			t.Helper()
			pkt := make([]byte, 35)
			pkt[0] = op
			binary.BigEndian.PutUint16(pkt[1:], idx)
			copy(pkt[3:], v[:])
			res, err := sw.Process(1, pkt)
			if err != nil || len(res.Out) != 1 {
				t.Fatalf("op %d: %v %v", op, res, err)
			}
			return fromBytes(res.Out[0].Data[19:35])
		}
		for _, r := range regs {
			reg, err := sw.Register(r.name)
			if err != nil {
				t.Fatal(err)
			}
			if reg.Size() != 16 {
				t.Fatalf("%s: %d cells", r.name, reg.Size())
			}
			for _, v := range [][16]byte{all, val} {
				want := trunc(v, r.width)
				run(r.op, 3, v)
				if got := run(r.op+1, 3, [16]byte{}); got != want {
					t.Errorf("tofino=%v %s: read %v after writing %x, want %v", tofino, r.name, got, v, want)
				}
				b, err := reg.Read(3)
				if err != nil || fromBytes(b) != want {
					t.Errorf("tofino=%v %s: Read %x %v, want %v", tofino, r.name, b, err, want)
				}
			}
			run(r.op, 16, all) // out of range: ignored
			if got := run(r.op+1, 16, [16]byte{}); got != (u128{}) {
				t.Errorf("tofino=%v %s: read out of range %v", tofino, r.name, got)
			}
			if err := reg.Write(5, all[:]); err != nil {
				t.Fatal(err)
			}
			if got := run(r.op+1, 5, [16]byte{}); got != trunc(all, r.width) {
				t.Errorf("tofino=%v %s: read %v after Write of all ones", tofino, r.name, got)
			}
			if _, err := reg.Read(16); err == nil {
				t.Errorf("%s: Read(16) of 16 cells did not fail", r.name)
			}
			reg.Reset()
			for _, i := range []uint16{3, 5} {
				if got := run(r.op+1, i, [16]byte{}); got != (u128{}) {
					t.Errorf("tofino=%v %s: cell %d is %v after Reset", tofino, r.name, i, got)
				}
			}
		}
	}
}

// TestHashKey1 pins the one-key lookup's hash to hashKey's, which indexes the entries.
func TestHashKey1(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range []uint64{0, 1, 1 << 63, ^uint64(0), rng.Uint64(), rng.Uint64()} {
		if got, want := hashKey1(v), hashKey(nil, []u128{{lo: v}}); got != want {
			t.Errorf("hashKey1(%#x) = %#x, hashKey = %#x", v, got, want)
		}
		if got, want := hashKey1(v), hashKey([]fieldMatch{{value: u128{lo: v}}}, nil); got != want {
			t.Errorf("hashKey1(%#x) = %#x, hashKey of the entry = %#x", v, got, want)
		}
	}
}

// TestLoadRefusesWhatBMv2Refuses: a v1model program p4c-bm2-ss refuses (a table applied at
// three places with different successors, as p4/netlock.p4 had it) does not load, with p4c's
// reason; the same program with the table applied once loads.
func TestLoadRefusesWhatBMv2Refuses(t *testing.T) {
	_, err := LoadFile("../front/testdata/bmv2/three_sites.p4", front.Options{}, Config{})
	if err == nil || !errors.Is(err, ErrInvalid) ||
		!strings.Contains(err.Error(), "Program is not supported by this target, because table I.t has multiple successors") {
		t.Fatalf("three_sites.p4 loaded or failed otherwise: %v", err)
	}
	if _, err := LoadFile("../front/testdata/bmv2/once_guarded.p4", front.Options{}, Config{}); err != nil {
		t.Fatalf("once_guarded.p4: %v", err)
	}
}
