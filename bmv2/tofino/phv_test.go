package tofino

import (
	"strings"
	"testing"
)

func ingressPHV(t *testing.T, src string) PHVDemand {
	t.Helper()
	p := firstPipe(t, src)
	return GressPHV(p.IngressParser.Parser, p.Ingress.Control, p.IngressDeparser.Control)
}

// TestGressPHV checks what the demand counts against the ingress of program("", "") (its
// parser extracts the intrinsic metadata and ethernet, its deparser emits the headers): each
// case adds bits to the whole and to the control's part. The cases of fields only the parser
// uses follow bf-p4c's phv.json (p4c-barefoot 9.13.4 on tna_register_action_1.p4 allocates
// none of the ingress intrinsic metadata its parser extracts and selects on).
func TestGressPHV(t *testing.T) {
	base := ingressPHV(t, program("", ""))
	// Ethernet (112 bits and its valid bit), which the deparser emits; the intrinsic metadata
	// the parser extracts is read by no one; the control touches nothing.
	if base.Bits != 112+1 || base.MAUBits != 0 {
		t.Fatalf("base: %v, %v", base, base.Roots())
	}
	pair := func(s string) string {
		return strings.Replace(s, "struct metadata_t", "struct pair_t { bit<32> hi; bit<32> lo; }\nstruct metadata_t", 1)
	}
	inner := func(s string) string {
		return strings.Replace(s, "struct header_t { ethernet_h ethernet; }", "struct header_t { ethernet_h ethernet; ethernet_h inner; }", 1)
	}
	for _, tt := range []struct {
		name          string
		src           string
		bits, mauBits int // added to base
	}{
		{"a metadata field written", program("", `meta.a = 1;`), 32, 32},
		{"two fields, each once", program("", `meta.a = meta.b; meta.b = meta.a + 1;`), 64, 64},
		{"a header field the parser already counts", program("", `meta.a = (bit<32>)hdr.ethernet.ether_type;`), 32, 32 + 16},
		{"a slice counts its whole field", program("", `meta.a[7:0] = hdr.ethernet.dst[7:0];`), 32, 32 + 48},
		{"a validity test counts the valid bit", program("", `if (hdr.ethernet.isValid()) { meta.a = 1; }`), 32, 32 + 1},
		{"a local variable", program("", `bit<16> x = (bit<16>)meta.a; meta.b = (bit<32>)x;`), 16 + 64, 16 + 64},
		{"action data is not PHV; the table's key is", program(`
    action set(bit<32> x) { meta.a = x; }
    table t { key = { hdr.ethernet.src : exact; } actions = { set; NoAction; } size = 16; }`, `t.apply();`), 32, 32 + 48},
		{"an action's variable", program(`
    action set() { bit<8> y = meta.c[7:0]; meta.d = (bit<32>)y; }`, `set();`), 8 + 64, 8 + 64},
		{"a struct given whole to an action: the fields it uses", program(`
    action f(inout metadata_t m) { m.c = 1; }`, `f(meta);`), 32, 32},
		{"a register action's input, not its cell", program(reg("r1", 16), `r1_wr.execute(0);`), 32, 32},
		{"a register action's result", program(reg("r1", 16), `meta.a = r1_rd.execute(0);`), 32 + 32, 32 + 32},
		{"a register cell of two halves is not PHV", pair(program(`
    Register<pair_t, bit<32>>(16) r;
    RegisterAction<pair_t, bit<32>, bit<32>>(r) r_up = {
        void apply(inout pair_t v, out bit<32> rv) { rv = v.lo; v.hi = meta.b; }
    };`, `meta.a = r_up.execute(0);`)), 64, 64},
		{"a local struct: the fields used", pair(program("", `pair_t v; v.hi = meta.a;`)), 64, 64},
		{"a local struct handed to an action counts once", pair(program(`
    action f(inout pair_t p) { p.lo = 1; }`, `pair_t v; v.hi = 2; f(v);`)), 64, 64},
		{"a header made valid and written", program("", `hdr.ethernet.setValid(); hdr.ethernet.src = 1;`), 0, 1 + 48},
		{"an extracted intrinsic field the control reads", program("", `meta.a = (bit<32>)ig_intr_md.ingress_port;`), 32 + 9, 32 + 9},
		{"an extracted header nobody reads or emits", strings.Replace(program("", ""), "apply { pkt.emit(hdr); }", "apply { }", 1), -113, 0},
		{"an extracted header not emitted, one field the parser selects on", strings.NewReplacer(
			"pkt.extract(hdr.ethernet); transition accept;",
			"pkt.extract(hdr.ethernet); transition select(hdr.ethernet.ether_type) { 0x800: reject; default: accept; }",
			"control IgDeparser(packet_out pkt, inout header_t hdr, in metadata_t meta, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {\n    apply { pkt.emit(hdr); }",
			"control IgDeparser(packet_out pkt, inout header_t hdr, in metadata_t meta, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {\n    apply { }").Replace(program("", "")), -113, 0},
		{"a header never valid: emitted, not counted", inner(program("", "")), 0, 0},
		{"a header never valid: tested, not counted", inner(program("", `if (hdr.inner.isValid()) { meta.a = 1; }`)), 32, 32},
		{"a header the control makes valid", inner(program("", `hdr.inner.setValid(); hdr.inner.dst = 1;`)), 112 + 1, 48 + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := ingressPHV(t, tt.src)
			if d.Bits-base.Bits != tt.bits || d.MAUBits-base.MAUBits != tt.mauBits {
				t.Errorf("added %d bits (%d by the control), want %d (%d): %v", d.Bits-base.Bits,
					d.MAUBits-base.MAUBits, tt.bits, tt.mauBits, d.Roots())
			}
			sum := 0
			for _, b := range d.ByRoot {
				sum += b
			}
			if sum != d.Bits {
				t.Errorf("ByRoot sums to %d, Bits %d", sum, d.Bits)
			}
		})
	}
}
