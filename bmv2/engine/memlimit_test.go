package engine

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// v1Program is a v1model program with decls in its ingress control and body in its apply block.
func v1Program(decls, body string) string {
	return `#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<32> b; }
struct H { h_t h; }
struct M { bit<32> x; }
parser P(packet_in p, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
` + decls + `
    apply {
` + body + `
    }
}
control Eg(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out p, in H hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;
`
}

// tnaProgram is a TNA program with decls in its ingress control and body in its apply block.
func tnaProgram(decls, body string) string {
	return `#include <core.p4>
#include <tna.p4>
header h_t { bit<8> a; bit<32> b; }
struct H { h_t h; }
struct M { }
parser IP(packet_in pkt, out H hdr, out M m, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h); transition accept; }
}
control Ig(inout H hdr, inout M m, in ingress_intrinsic_metadata_t ig_intr_md,
           in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
           inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
           inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
` + decls + `
    apply {
` + body + `
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
control ID(packet_out pkt, inout H hdr, in M m, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr.h); }
}
parser EP(packet_in pkt, out H hdr, out M m, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); transition accept; }
}
control Eg(inout H hdr, inout M m, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) { apply { } }
control ED(packet_out pkt, inout H hdr, in M m, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr.h); }
}
Pipeline(IP(), Ig(), ID(), EP(), Eg(), ED()) pipe;
Switch(pipe) main;
`
}

// TestMemoryLimitHugeState is issue 18's item 5: register<bit<128>>(32w0xFFFFFFFF) made Load
// allocate 64 GB. Every eagerly allocated state (registers, counters, meters, v1model and TNA)
// is refused past the limit with ErrMemoryLimit and a message naming it, before it is allocated.
func TestMemoryLimitHugeState(t *testing.T) {
	const limit = 64 << 20
	for _, tc := range []struct{ name, src, what string }{
		{"v1model register", v1Program("register<bit<128>>(32w0xFFFFFFFF) r;", "r.write(0, 1);"), "register I.r"},
		{"v1model counter", v1Program("counter(32w0xFFFFFFFF, CounterType.packets) c;", "c.count(0);"), "counter I.c"},
		{"v1model meter", v1Program("meter(32w0xFFFFFFFF, MeterType.packets) mt;", "mt.execute_meter(0, m.x);"), "meter I.mt"},
		{"TNA register", tnaProgram("Register<bit<32>, bit<32>>(32w0xFFFFFFFF) r;", ""), "register Ig.r"},
		{"TNA counter", tnaProgram("Counter<bit<64>, bit<32>>(32w0xFFFFFFFF, CounterType_t.PACKETS) c;", "c.count(0);"), "counter Ig.c"},
		{"TNA meter", tnaProgram("Meter<bit<32>>(32w0xFFFFFFFF, MeterType_t.PACKETS) mt;", "hdr.h.a = mt.execute(0);"), "meter Ig.mt"},
	} {
		c := checkSource(t, "m.p4", tc.src, nil)
		_, err := Load(c, Config{MemoryLimit: limit})
		if !errors.Is(err, ErrMemoryLimit) {
			t.Errorf("%s: got %v, want ErrMemoryLimit", tc.name, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.what) || !strings.HasPrefix(err.Error(), "m.p4:") {
			t.Errorf("%s: the error does not say where and what: %v", tc.name, err)
		}
		// The default limit (a quarter of the machine's memory) refuses it too, on any machine
		// with less than 256 GB.
		if DefaultMemoryLimit() < 64<<30 {
			if _, err := Load(c, Config{}); !errors.Is(err, ErrMemoryLimit) {
				t.Errorf("%s, default limit %d: got %v, want ErrMemoryLimit", tc.name, DefaultMemoryLimit(), err)
			}
		}
	}
}

// TestMemoryLimitExact: the limit counts exactly the bytes of the cells and one packet's state,
// and the program that needs exactly the limit loads (the negative control of the refusals).
func TestMemoryLimitExact(t *testing.T) {
	src := v1Program("register<bit<32>>(1000) r32; register<bit<64>>(100) r64; register<bit<100>>(10) r100; counter(50, CounterType.packets) c;",
		"r32.write(0, 1); r64.write(0, 1); r100.write(0, 1); c.count(0);")
	c := checkSource(t, "m.p4", src, nil)
	sw, err := Load(c, Config{MemoryLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	used := sw.MemoryUsed()
	cells := int64(1000*4 + 100*8 + 10*16 + 50*16)
	slots := used - cells
	if slots <= 0 || slots%8 != 0 || slots != int64(sw.nslots)*8 {
		t.Fatalf("used %d bytes: %d for the cells, %d for %d slots", used, cells, slots, sw.nslots)
	}
	if _, err := Load(c, Config{MemoryLimit: used}); err != nil {
		t.Fatalf("limit %d (what it needs): %v", used, err)
	}
	if _, err := Load(c, Config{MemoryLimit: used - 1}); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("limit %d (one byte short): got %v, want ErrMemoryLimit", used-1, err)
	}
}

// TestMemoryLimitTableEntries: entries count against the limit as they are inserted and are
// given back when deleted or cleared; const entries count at Load.
func TestMemoryLimitTableEntries(t *testing.T) {
	src := v1Program(`action set(bit<32> v) { hdr.h.b = v; }
    table t { key = { hdr.h.a: exact; } actions = { set; NoAction; } size = 1024; }
    table k { key = { hdr.h.a: exact; } actions = { set; NoAction; }
        const entries = { 1: set(1); 2: set(2); 3: set(3); } }`, "t.apply(); k.apply();")
	c := checkSource(t, "m.p4", src, nil)
	sw, err := Load(c, Config{MemoryLimit: -1})
	if err != nil {
		t.Fatal(err)
	}
	tt, err1 := sw.Table("I.t")
	k, err2 := sw.Table("I.k")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	cost := tt.EntryBytes()
	if cost <= 0 || k.EntryBytes() != cost {
		t.Fatalf("entry bytes %d and %d", cost, k.EntryBytes())
	}
	base := sw.MemoryUsed() // the const entries of k are in it
	if _, err := Load(c, Config{MemoryLimit: 3*cost - 1}); !errors.Is(err, ErrMemoryLimit) || !strings.Contains(fmt.Sprint(err), "entries of table I.k") {
		t.Fatalf("limit one byte short of the const entries: got %v, want ErrMemoryLimit", err)
	}
	const fit = 5
	sw, err = Load(c, Config{MemoryLimit: base + fit*cost})
	if err != nil {
		t.Fatal(err)
	}
	if tt, err = sw.Table("I.t"); err != nil {
		t.Fatal(err)
	}
	entry := func(a byte) Entry {
		return Entry{Match: []FieldMatch{{Value: []byte{a}}}, Action: "set", Args: [][]byte{{0, 0, 0, a}}}
	}
	for a := byte(0); a < fit; a++ {
		if err := tt.Insert(entry(a)); err != nil {
			t.Fatalf("entry %d of %d: %v", a+1, fit, err)
		}
	}
	if err := tt.Insert(entry(fit)); !errors.Is(err, ErrMemoryLimit) {
		t.Fatalf("entry %d past the limit: got %v, want ErrMemoryLimit", fit+1, err)
	}
	if err := tt.Delete(entry(0)); err != nil {
		t.Fatal(err)
	}
	if err := tt.Insert(entry(fit)); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	tt.Clear()
	if got := sw.MemoryUsed(); got != base {
		t.Fatalf("after Clear %d bytes used, want %d", got, base)
	}
}

// TestMemTotal reads /proc/meminfo's MemTotal, and DefaultMemoryLimit is a quarter of the
// machine's memory.
func TestMemTotal(t *testing.T) {
	if got := memTotal([]byte("MemTotal:       24576000 kB\nMemFree:  1 kB\n")); got != 24576000*1024 {
		t.Errorf("memTotal = %d", got)
	}
	for _, bad := range []string{"", "MemFree: 1 kB\n", "MemTotal: x kB\n", "MemTotal: 99999999999999999 kB\n"} {
		if got := memTotal([]byte(bad)); got != 0 {
			t.Errorf("memTotal(%q) = %d, want 0", bad, got)
		}
	}
	if m := MachineMemory(); m <= 0 || DefaultMemoryLimit() != m/DefaultMemoryFraction {
		t.Errorf("machine memory %d, default limit %d", m, DefaultMemoryLimit())
	}
}

// TestParseMemoryLimit reads --memory-limit's forms, and refuses what is not one (the
// negative controls: each bad form fails).
func TestParseMemoryLimit(t *testing.T) {
	const machine = 8 << 30
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"25%", 2 << 30},
		{"100%", 8 << 30},
		{"0.5%", 42949672},
		{" 12.5 % ", 1 << 30},
		{"none", -1},
		{"1", 1},
		{"4096", 4096},
		{"256MiB", 256 << 20},
		{"1 GiB", 1 << 30},
		{"2TiB", 2 << 40},
		{"3kB", 3000},
		{"1GB", 1e9},
		{"512B", 512},
		{"8388607TiB", 8388607 << 40},
	} {
		got, err := ParseMemoryLimit(tc.in, machine)
		if err != nil || got != tc.want {
			t.Errorf("ParseMemoryLimit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "-1", "0%", "101%", "x%", "12XB", "1.5GiB", "8388608TiB", "9223372036854775808", "auto"} {
		if got, err := ParseMemoryLimit(bad, machine); err == nil {
			t.Errorf("ParseMemoryLimit(%q) = %d, want an error", bad, got)
		}
	}
	if got, _ := ParseMemoryLimit("1e-12%", machine); got != 1 {
		t.Errorf("a tiny share is %d bytes, want at least 1", got)
	}
}

// TestDeepProgramLoads: a program nested close to the front end's default bound loads and runs
// (the engine's compiler recurses once per level), and one nested 500,000 deep, which overflowed
// the engine's stack (a fatal error, not a panic), is refused by the front end.
func TestDeepProgramLoads(t *testing.T) {
	deep := func(n int) string {
		return v1Program("", "hdr.h.a = "+strings.Repeat("-", n)+"hdr.h.a;")
	}
	c := checkSource(t, "m.p4", deep(front.DefaultMaxNesting-8), nil)
	sw, err := Load(c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sw.Process(1, []byte{3, 0, 0, 0, 0})
	if err != nil || len(res.Out) != 1 {
		t.Fatalf("out %v, err %v", res.Out, err)
	}
	if got, want := res.Out[0].Data[0], byte(3); got != want { // an even number of negations
		t.Errorf("a = %d, want %d", got, want)
	}
	toks, errs := front.PreprocessSource("m.p4", deep(500_000), nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if _, err := front.Parse(toks); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Fatalf("500,000 levels: got %v, want the nesting error", err)
	}
}
