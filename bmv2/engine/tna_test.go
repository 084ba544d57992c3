package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/front"
)

// tnaProg is a TNA program around an ingress control: decls go into the ingress control's
// locals, body into its apply block. The packet is Ethernet then reg_h; the ingress sends it
// back to its port unless the body decides otherwise.
const tnaProg = `#include <core.p4>
#include <tna.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header reg_h { bit<8> op; bit<32> idx; bit<32> val; bit<32> rv; }
struct hdr_t { eth_t eth; reg_h reg; }
struct md_t { bit<32> x; }
struct pair { bit<32> lo; bit<32> hi; }
struct ehdr_t { }
struct emd_t { }
parser IgP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5 : parse_reg;
            0x0bad : reject;
            default : accept;
        }
    }
    state parse_reg {
        pkt.extract(hdr.reg);
        transition accept;
    }
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
%s
    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
%s
    }
}
control IgD(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
%s
    apply {
%s
        pkt.emit(hdr);
    }
}
parser EgP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.eth);
        transition accept;
    }
}
control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
%s
    apply {
        hdr.eth.src[15:0] = eg_intr_md.egress_rid;
%s
    }
}
control EgD(packet_out pkt, inout hdr_t hdr, in md_t md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
`

// tnaSrc fills tnaProg: ingress locals and body, ingress deparser locals and body, egress
// locals and body.
type tnaSrc struct{ igDecls, igBody, dpDecls, dpBody, egDecls, egBody string }

func (s tnaSrc) text() string {
	return fmt.Sprintf(tnaProg, s.igDecls, s.igBody, s.dpDecls, s.dpBody, s.egDecls, s.egBody)
}

// loadTNA checks and loads a program from source; the clock advances 1 us per reading.
func loadTNA(t testing.TB, src string, cfg Config) (*Switch, error) {
	t.Helper()
	checked, err := front.LoadWith("tna.p4", func(p string) ([]byte, error) {
		if p == "tna.p4" {
			return []byte(src), nil
		}
		return nil, fmt.Errorf("no file %s", p)
	})
	if err != nil {
		t.Fatalf("front end: %v", err)
	}
	if cfg.Now == nil {
		now := time.Unix(0, 0)
		cfg.Now = func() time.Time { now = now.Add(time.Microsecond); return now }
	}
	return Load(checked, cfg)
}

func regPkt(op byte, idx, val uint32) []byte {
	b := []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x88, 0xb5, op}
	b = append(b, byte(idx>>24), byte(idx>>16), byte(idx>>8), byte(idx))
	b = append(b, byte(val>>24), byte(val>>16), byte(val>>8), byte(val))
	return append(b, 0, 0, 0, 0)
}

const regDecls = `
    Register<bit<32>, bit<32>>(64) reg;
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) inc = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; value = value + 1; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) dec = {
        void apply(inout bit<32> value, out bit<32> rv) { value = value - 1; rv = value; }
    };
`

// TestTNARegisterRules covers the load-time Tofino rules: each program must be refused with a
// message naming the lines involved, and the allowed variants (the positive controls) load.
func TestTNARegisterRules(t *testing.T) {
	tests := []struct {
		name string
		src  tnaSrc
		want []string // substrings of the error; none: the program loads
	}{
		{"two register actions in sequence", tnaSrc{igDecls: regDecls, igBody: `
        hdr.reg.rv = inc.execute(hdr.reg.idx);
        hdr.reg.val = dec.execute(hdr.reg.idx);`},
			[]string{"register reg is accessed by two register actions in one pass", "inc.execute at tna.p4:42:22", "dec.execute at tna.p4:43:23"}},
		{"exclusive branches", tnaSrc{igDecls: regDecls, igBody: `
        if (hdr.reg.op == 1) { hdr.reg.rv = inc.execute(hdr.reg.idx); } else { hdr.reg.rv = dec.execute(hdr.reg.idx); }`}, nil},
		{"exit before the second", tnaSrc{igDecls: regDecls, igBody: `
        if (hdr.reg.op == 1) { hdr.reg.rv = inc.execute(hdr.reg.idx); exit; }
        hdr.reg.rv = dec.execute(hdr.reg.idx);`}, nil},
		{"one after the if", tnaSrc{igDecls: regDecls, igBody: `
        if (hdr.reg.op == 1) { hdr.reg.rv = inc.execute(hdr.reg.idx); }
        hdr.reg.rv = dec.execute(hdr.reg.idx);`},
			[]string{"two register actions in one pass", "inc.execute at tna.p4:42:45", "dec.execute at tna.p4:43:22"}},
		{"actions of one table", tnaSrc{igDecls: regDecls + `
    action a1() { hdr.reg.rv = inc.execute(hdr.reg.idx); }
    action a2() { hdr.reg.rv = dec.execute(hdr.reg.idx); }
    table t { key = { hdr.reg.op : exact; } actions = { a1; a2; } }`, igBody: `
        t.apply();`}, nil},
		{"a table's action and the apply block", tnaSrc{igDecls: regDecls + `
    action a1() { hdr.reg.rv = inc.execute(hdr.reg.idx); }
    table t { key = { hdr.reg.op : exact; } actions = { a1; NoAction; } }`, igBody: `
        t.apply();
        hdr.reg.rv = dec.execute(hdr.reg.idx);`},
			[]string{"two register actions in one pass", "inc.execute at tna.p4:39:32", "dec.execute at tna.p4:45:22"}},
		{"an action run twice", tnaSrc{igDecls: regDecls + `
    action a1() { hdr.reg.rv = inc.execute(hdr.reg.idx); }`, igBody: `
        a1();
        a1();`},
			[]string{"two register actions in one pass", "inc.execute at tna.p4:39:32 and inc.execute at tna.p4:39:32"}},
		{"read and write in one action", tnaSrc{igDecls: `
    Register<bit<32>, bit<32>>(64) reg;
    action rw() { bit<32> v = reg.read(hdr.reg.idx); reg.write(hdr.reg.idx, v + 1); }`, igBody: `
        rw();`}, nil},
		{"read and write in the apply block", tnaSrc{igDecls: `
    Register<bit<32>, bit<32>>(64) reg;`, igBody: `
        bit<32> v = reg.read(hdr.reg.idx);
        reg.write(hdr.reg.idx, v + 1);`},
			[]string{"two register actions in one pass", "reg.read at tna.p4:35:21", "reg.write at tna.p4:36:9"}},
		{"a 64-bit register", tnaSrc{igDecls: `
    Register<bit<64>, bit<32>>(64) wide;
    RegisterAction<bit<64>, bit<32>, bit<32>>(wide) add = {
        void apply(inout bit<64> value, out bit<32> rv) { value = value + 1; rv = value[31:0]; }
    };`, igBody: `
        hdr.reg.rv = add.execute(hdr.reg.idx);`},
			[]string{"tna.p4:32:53:", "register action add on wide", "not bit<64>"}},
		{"64-bit arithmetic on a 32-bit cell", tnaSrc{igDecls: `
    Register<bit<32>, bit<32>>(64) reg;
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) scale = {
        void apply(inout bit<32> value, out bit<32> rv) {
            bit<64> wide = (bit<64>)value * 3;
            value = wide[31:0];
            rv = value;
        }
    };`, igBody: `
        hdr.reg.rv = scale.execute(hdr.reg.idx);`},
			[]string{"tna.p4:34:43:", "register action scale", "(bit<64>)value * 3", "computes on 64 bits"}},
		{"a pair of 32-bit fields", tnaSrc{igDecls: `
    Register<pair, bit<32>>(64) pairs;
    RegisterAction<pair, bit<32>, bit<32>>(pairs) both = {
        void apply(inout pair value, out bit<32> rv) { value.lo = value.lo + 1; value.hi = value.hi + hdr.reg.val; rv = value.hi; }
    };`, igBody: `
        hdr.reg.rv = both.execute(hdr.reg.idx);`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTNA(t, tt.src.text(), Config{})
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded; want an error with %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestTNARegisterGress: a register used by register actions of ingress and of egress is
// refused, naming both.
func TestTNARegisterGress(t *testing.T) {
	src := tnaSrc{
		igDecls: `
    RegisterAction<bit<32>, bit<32>, bit<32>>(shared) r1 = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; }
    };`,
		igBody: `
        hdr.reg.rv = r1.execute(0);`,
		egDecls: `
    RegisterAction<bit<32>, bit<32>, bit<32>>(shared) r2 = {
        void apply(inout bit<32> value) { value = 1; }
    };`,
		egBody: `
        r2.execute(0);`,
	}.text()
	src = strings.Replace(src, "control Ing(", "Register<bit<32>, bit<32>>(64) shared;\ncontrol Ing(", 1)
	_, err := loadTNA(t, src, Config{})
	if err == nil || !strings.Contains(err.Error(), "register shared is used in ingress (r1.execute at tna.p4:") || !strings.Contains(err.Error(), "and in egress (r2.execute at tna.p4:") {
		t.Fatalf("err = %v", err)
	}
}

// TestTNARegisterPerPacket checks the per-packet rule with a register the load-time analysis
// cannot see (passed to a sub-control), and that one register action per pass runs.
func TestTNARegisterPerPacket(t *testing.T) {
	src := tnaSrc{igDecls: regDecls + `
    Register<bit<32>, bit<32>>(8) other;
    RegisterAction<bit<32>, bit<32>, bit<32>>(other) oinc = {
        void apply(inout bit<32> value, out bit<32> rv) { value = value + hdr.reg.val; rv = value; }
    };`, igBody: `
        if (hdr.reg.op == 1) { hdr.reg.rv = inc.execute(hdr.reg.idx); }
        if (hdr.reg.op == 2) { hdr.reg.rv = oinc.execute(hdr.reg.idx); }`}
	sw, err := loadTNA(t, src.text(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		res, err := sw.Process(1, regPkt(1, 5, 0))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Out) != 1 || res.Out[0].Port != 1 || !bytes.Equal(res.Out[0].Data[23:27], []byte{0, 0, 0, byte(i)}) {
			t.Fatalf("packet %d: %v", i, res.Out)
		}
	}
	res, err := sw.Process(2, regPkt(2, 3, 0x10))
	if err != nil || len(res.Out) != 1 || res.Out[0].Data[26] != 0x10 {
		t.Fatalf("oinc: %v %v", res, err)
	}
	b, _ := sw.Register("Ing.reg")
	if v, _ := b.Read(5); !bytes.Equal(v, []byte{0, 0, 0, 3}) {
		t.Errorf("reg[5] = %x, want 3", v)
	}
}

// TestTNAResubmitOnce: a packet that asks to be resubmitted again fails with ErrTNAResubmit
// (wrapping ErrTofinoConstraint); the first resubmission works.
func TestTNAResubmitOnce(t *testing.T) {
	src := tnaSrc{
		igBody: `
        ig_dprsr_md.resubmit_type = 1;`,
		dpDecls: `
    Resubmit(1) resub;`,
		dpBody: `
        if (ig_dprsr_md.resubmit_type == 1) { resub.emit(); }`,
	}
	sw, err := loadTNA(t, src.text(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sw.Process(1, regPkt(1, 0, 0))
	if !errors.Is(err, ErrTNAResubmit) || !errors.Is(err, ErrTofinoConstraint) || !strings.Contains(err.Error(), "tna.p4:42:47") {
		t.Fatalf("err = %v, want ErrTNAResubmit naming the Resubmit.emit line", err)
	}
}

// TestTNAParserErrors: a packet the ingress parser rejects is dropped, unless the program
// reads parser_err, which then carries PARSER_ERROR_NO_MATCH (or PARTIAL_HDR for a short
// packet) into the ingress control.
func TestTNAParserErrors(t *testing.T) {
	bad := []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x0b, 0xad, 1, 2}
	short := []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0x88, 0xb5, 1}
	ignore, err := loadTNA(t, tnaSrc{}.text(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][]byte{bad, short} {
		res, err := ignore.Process(1, p)
		if err != nil || len(res.Out) != 0 {
			t.Errorf("parser error not read by the program: %v %v, want a drop", res.Out, err)
		}
	}
	read, err := loadTNA(t, tnaSrc{igBody: `
        hdr.eth.dst[15:0] = ig_prsr_md.parser_err;`}.text(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	// NO_MATCH (reject) still drops; PARTIAL_HDR reaches the ingress control.
	if res, err := read.Process(1, bad); err != nil || len(res.Out) != 0 {
		t.Errorf("reject: %v %v, want a drop", res.Out, err)
	}
	res, err := read.Process(1, short)
	if err != nil || len(res.Out) != 1 {
		t.Fatalf("short packet: %v %v", res, err)
	}
	if got := res.Out[0].Data[4:6]; !bytes.Equal(got, []byte{0, 2}) {
		t.Errorf("parser_err = %x, want 0002 (PARSER_ERROR_PARTIAL_HDR)", got)
	}
	// The payload is what the parser did not extract: the truncated reg_h byte.
	if !bytes.Equal(res.Out[0].Data[14:], []byte{1}) {
		t.Errorf("payload %x", res.Out[0].Data[14:])
	}
}

// TestTNAMulticastCPUAndDrop: multicast copies go through egress with their replication id,
// copy_to_cpu sends a packet-in, drop_ctl drops, and an unwritten ucast_egress_port sends
// nothing.
func TestTNAMulticastCPUAndDrop(t *testing.T) {
	src := tnaSrc{igBody: `
        if (hdr.reg.op == 1) { ig_tm_md.mcast_grp_a = 7; ig_tm_md.ucast_egress_port = 9; }
        if (hdr.reg.op == 2) { ig_tm_md.copy_to_cpu = 1; }
        if (hdr.reg.op == 3) { ig_dprsr_md.drop_ctl = 1; }`}
	var pins [][]byte
	sw, err := loadTNA(t, src.text(), Config{CPUPort: 64, OnPacketIn: func(b []byte) { pins = append(pins, append([]byte(nil), b...)) }})
	if err != nil {
		t.Fatal(err)
	}
	sw.SetMulticastGroup(7, []Replica{{Port: 2, Rid: 0x11}, {Port: 3, Rid: 0x22}})
	res, err := sw.Process(1, regPkt(1, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]uint16{}
	for _, o := range res.Out {
		got[o.Port] = uint16(o.Data[10])<<8 | uint16(o.Data[11])
	}
	if len(res.Out) != 3 || got[9] != 0 || got[2] != 0x11 || got[3] != 0x22 {
		t.Errorf("multicast outputs (port: egress_rid in the source) %v", got)
	}
	res, err = sw.Process(1, regPkt(2, 0, 0))
	if err != nil || len(res.Out) != 1 || len(res.PacketIn) != 1 || len(pins) != 1 {
		t.Errorf("copy_to_cpu: out %v, packet-ins %d", res.Out, len(pins))
	}
	res, err = sw.Process(1, regPkt(3, 0, 0))
	if err != nil || len(res.Out) != 0 {
		t.Errorf("drop_ctl: %v %v", res.Out, err)
	}
	// A PacketOut enters ingress on the CPU port and goes back to it: a packet-in.
	res, err = sw.PacketOut(regPkt(0, 0, 0))
	if err != nil || len(res.PacketIn) != 1 {
		t.Errorf("packet-out: %v %v", res, err)
	}
	noPort, err := loadTNA(t, strings.Replace(tnaSrc{}.text(), "ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;", "", 1), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := noPort.Process(1, regPkt(0, 0, 0)); err != nil || len(res.Out) != 0 {
		t.Errorf("ucast_egress_port never written: %v %v, want a drop", res.Out, err)
	}
}

// TestCRCCatalogue checks the CRCs against the check values ("123456789") of the CRC
// catalogue (reveng), which were not produced by this code.
func TestCRCCatalogue(t *testing.T) {
	check := []byte("123456789")
	tests := []struct {
		name string
		spec crcSpec
		want uint64
	}{
		{"CRC-8", *tnaCRCs["CRC8"], 0xf4},
		{"CRC-16/ARC", *tnaCRCs["CRC16"], 0xbb3d},
		{"CRC-32", *tnaCRCs["CRC32"], 0xcbf43926},
		{"CRC-64/ECMA-182", *tnaCRCs["CRC64"], 0x6c40df5f0b497347},
		{"CRC-16/CCITT-FALSE", crcSpec{width: 16, poly: 0x1021, init: 0xffff}, 0x29b1},
		{"CRC-16/KERMIT", crcSpec{width: 16, poly: 0x1021, reflect: true}, 0x2189},
		{"CRC-32C", crcSpec{width: 32, poly: 0x1edc6f41, reflect: true, init: 0xffffffff, xor: 0xffffffff}, 0xe3069283},
		{"CRC-5/USB", crcSpec{width: 5, poly: 0x05, reflect: true, init: 0x1f, xor: 0x1f}, 0x19},
	}
	for _, tt := range tests {
		if got := tt.spec.crc(check); got != tt.want {
			t.Errorf("%s = %#x, want %#x", tt.name, got, tt.want)
		}
		// The generic code agrees with the table-driven fast paths.
		s := tt.spec
		if got := crcGeneric(check, s.width, s.poly, s.reflect, s.init, s.xor); got != tt.want {
			t.Errorf("%s (generic) = %#x, want %#x", tt.name, got, tt.want)
		}
	}
	s := crcSpec{width: 8, poly: 0x07}
	if got := s.fit(0xab, 16); got != (u128{lo: 0xab}) {
		t.Errorf("zero-extended %v", got)
	}
	s.extend = true
	if got := s.fit(0xab, 16); got != (u128{lo: 0xabab}) {
		t.Errorf("extended %v", got)
	}
	w := crcSpec{width: 16, msb: true}
	if got := w.fit(0xabcd, 8); got != (u128{lo: 0xab}) {
		t.Errorf("msb %v", got)
	}
}

// TestTNASteadyStateAllocs: a packet through a TNA program's ingress and egress, with a
// register action, a counter and a table, allocates nothing once the switch is warm.
func TestTNASteadyStateAllocs(t *testing.T) {
	src := tnaSrc{igDecls: regDecls + `
    Counter<bit<32>, bit<8>>(256, CounterType_t.PACKETS_AND_BYTES) ops;
    action fwd(PortId_t p) { ig_tm_md.ucast_egress_port = p; }
    table t { key = { hdr.reg.op : exact; } actions = { fwd; NoAction; } }`, igBody: `
        ops.count(hdr.reg.op);
        hdr.reg.rv = inc.execute(hdr.reg.idx);
        t.apply();`}
	sw, err := loadTNA(t, src.text(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := sw.Table("Ing.t")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Insert(Entry{Match: []FieldMatch{{Value: []byte{1}}}, Action: "Ing.fwd", Args: [][]byte{{0, 2}}}); err != nil {
		t.Fatal(err)
	}
	pkt := regPkt(1, 3, 0)
	for i := 0; i < 10; i++ {
		if res, err := sw.Process(1, pkt); err != nil || len(res.Out) != 1 || res.Out[0].Port != 2 {
			t.Fatalf("warm-up: %v %v", res, err)
		}
	}
	if n := testing.AllocsPerRun(200, func() { _, _ = sw.Process(1, pkt) }); n != 0 {
		t.Errorf("%v allocations per packet, want 0", n)
	}
}

// TestTNADeparserTypeWritten: Resubmit.emit does nothing unless the ingress wrote
// resubmit_type (even when the deparser's condition compares it with 0, the value of an
// unwritten field in the P4 source), as on Tofino; written as 0, it resubmits.
func TestTNADeparserTypeWritten(t *testing.T) {
	for _, tt := range []struct {
		body      string
		resubmits bool
	}{
		{"", false},
		{"if (hdr.reg.op == 1 && ig_intr_md.resubmit_flag == 0) { ig_dprsr_md.resubmit_type = 0; }", true},
	} {
		src := tnaSrc{
			igDecls: `
    Counter<bit<32>, bit<1>>(2, CounterType_t.PACKETS) passes;`,
			igBody: `
        passes.count(ig_intr_md.resubmit_flag);
        ` + tt.body,
			dpDecls: `
    Resubmit() resub;`,
			dpBody: `
        if (ig_dprsr_md.resubmit_type == 0) { resub.emit(); }`,
		}.text()
		// The ingress parser here skips the 64 bits after the intrinsic metadata whatever they
		// hold, so a resubmitted packet parses as the original one.
		sw, err := loadTNA(t, src, Config{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := sw.Process(1, regPkt(1, 0, 0))
		if err != nil || len(res.Out) != 1 {
			t.Fatalf("%q: %v %v", tt.body, res, err)
		}
		k, _ := sw.Counter("Ing.passes")
		if second := k.Packets[1] == 1; second != tt.resubmits {
			t.Errorf("%q: resubmitted %v, want %v (passes %v)", tt.body, second, tt.resubmits, k.Packets)
		}
	}
}

// TestTNARandom: Random<W>.get() takes the injected source, truncated to W bits.
func TestTNARandom(t *testing.T) {
	src := tnaSrc{igDecls: `
    Random<bit<16>>() rnd;`, igBody: `
        hdr.reg.rv[15:0] = rnd.get();`}
	sw, err := loadTNA(t, src.text(), Config{Random: func() uint64 { return 0x123456789abcdef0 }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sw.Process(1, regPkt(1, 0, 0))
	if err != nil || len(res.Out) != 1 {
		t.Fatalf("%v %v", res, err)
	}
	if got := res.Out[0].Data[25:27]; !bytes.Equal(got, []byte{0xde, 0xf0}) {
		t.Errorf("random %x, want def0", got)
	}
}

// TestTNALoopback: a packet sent to a port in loopback mode enters the ingress again, received
// on that port, as the egress deparsed it (Tofino's recirculation). Port 68 (pipe 0's
// recirculation port) is in loopback by default; Config.Loopback replaces the set.
func TestTNALoopback(t *testing.T) {
	src := tnaSrc{igBody: `
        if (hdr.reg.val != 0) {
            hdr.reg.val = hdr.reg.val - 1;
            hdr.reg.rv = hdr.reg.rv + 1;
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.reg.idx;
        } else {
            hdr.reg.op = (bit<8>)ig_intr_md.ingress_port;
            ig_tm_md.ucast_egress_port = 5;
        }`}
	for _, tc := range []struct {
		name     string
		loopback []int
		port     uint32
		out      int    // the port the packet leaves on
		passes   uint32 // recirculations counted in rv
	}{
		{"default port 68", nil, TNARecirculationPort, 5, 3},
		{"a front-panel port in loopback", []int{30}, 30, 5, 3},
		{"68 not in loopback", []int{30}, TNARecirculationPort, TNARecirculationPort, 1},
		{"no loopback port", []int{}, TNARecirculationPort, TNARecirculationPort, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw, err := loadTNA(t, src.text(), Config{Loopback: tc.loopback})
			if err != nil {
				t.Fatal(err)
			}
			res, err := sw.Process(1, regPkt(0, tc.port, 3))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Out) != 1 || res.Out[0].Port != tc.out {
				t.Fatalf("outputs %v, want one on port %d", res.Out, tc.out)
			}
			d := res.Out[0].Data
			rv := uint32(d[23])<<24 | uint32(d[24])<<16 | uint32(d[25])<<8 | uint32(d[26])
			if rv != tc.passes {
				t.Errorf("%d recirculations, want %d", rv, tc.passes)
			}
			if tc.out == 5 && d[14] != byte(tc.port) {
				t.Errorf("the last pass was received on port %d, want %d", d[14], tc.port)
			}
		})
	}
	// A loop is bounded by MaxPasses.
	sw, err := loadTNA(t, tnaSrc{igBody: `
        ig_tm_md.ucast_egress_port = 68;`}.text(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Process(1, regPkt(0, 0, 0)); !errors.Is(err, ErrTooManyPasses) {
		t.Errorf("endless recirculation: %v, want ErrTooManyPasses", err)
	}
}
