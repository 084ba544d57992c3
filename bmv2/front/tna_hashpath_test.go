package front

import "testing"

// hashPathProgram is a TNA program whose ingress declares two Hash instances (h1 CRC32, h2
// CRC16) and decls, and whose apply block runs body. Its header h_t (32-bit a, b, k, 16-bit d,
// 8-bit c, e, 9-bit p, 7-bit q) is emitted, so what body writes is live for the compiler.
func hashPathProgram(decls, body string) string {
	return oneIngressProgram("bit<32> a; bit<32> b; bit<32> k; bit<16> d; bit<8> c; bit<8> e; bit<9> p; bit<7> q;", `
    Hash<bit<32>>(HashAlgorithm_t.CRC32) h1;
    Hash<bit<32>>(HashAlgorithm_t.CRC16) h2;
    `+decls, body)
}

// oneIngressProgram is a TNA program of one Pipeline whose packets are one header, h_t of
// fields (hdr.h, extracted after the port metadata and emitted whole), and whose ingress
// declares decls and applies body, then sends the packet to port 1; its egress does nothing.
func oneIngressProgram(fields, decls, body string) string {
	return `#include <core.p4>
#include <tna.p4>
header h_t { ` + fields + ` }
struct hdr_t { h_t h; }
struct md_t { }
parser IgP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig) {
    state start { pkt.extract(ig); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.h); transition accept; }
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig,
            in ingress_intrinsic_metadata_from_parser_t p, inout ingress_intrinsic_metadata_for_deparser_t d,
            inout ingress_intrinsic_metadata_for_tm_t tm) {
    ` + decls + `
    apply { ` + body + ` tm.ucast_egress_port = 1; }
}
control IgD(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
parser EgP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg) { state start { pkt.extract(eg); transition accept; } }
control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg, in egress_intrinsic_metadata_from_parser_t p,
           inout egress_intrinsic_metadata_for_deparser_t d, inout egress_intrinsic_metadata_for_output_port_t o) { apply { } }
control EgD(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t d) { apply { pkt.emit(hdr); } }
Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
`
}

// hashPathCases are the rules of check_tna_hashpath.go, each verdict bf-p4c 9.13.4's (p4c
// 34b86e9) on 2026-12-01: a table with no key whose action reads a hash or a random number
// (the tables p4c makes of an apply block's statements among them) has one action and no
// action data, no constant an instruction cannot hold; a keyed table's default action reads no
// hash. On Tofino 2 an 8-bit field's set after a hash depends on the allocation: "hdr.h.c = 8"
// compiled in a header of six fields and is refused in this one.
func hashPathCases() []tnaCase {
	const (
		run      = "become an action of a table with no key"
		path     = tnaHashPathMsg
		multiple = "the table has multiple actions"
		data     = "the table requires programming action data"
		deflt    = "Cannot specify a as the default action"
		only     = "marked as defaultonly"
	)
	const h = "hdr.h.a = h1.get({hdr.h.k}); "
	type c struct {
		name, gen, decls, body string
		want, compiler         string
	}
	cases := []c{
		// the apply block's runs: constants that go to action data
		{"a masked hash output", "1", "", h + "hdr.h.b = h2.get({hdr.h.k, hdr.h.d}); hdr.h.b = hdr.h.b & 0xfffffffc;", "", ""},
		{"an & with a constant", "1", "", h + "hdr.h.b = hdr.h.b & 0xfffffff0;", run, path},
		{"an & with 7", "1", "", h + "hdr.h.b = hdr.h.b & 7;", run, path},
		{"an & of an 8-bit field", "1", "", h + "hdr.h.c = hdr.h.c & 0xf0;", run, path},
		{"a 32-bit set beyond a load_const", "1", "", h + "hdr.h.b = 0x12345678;", run, path},
		{"a 32-bit set of 21 bits", "1", "", h + "hdr.h.b = 0x100000;", "", ""},
		{"a 32-bit set of 0xfff00000", "1", "", h + "hdr.h.b = 0xfff00000;", run, path},
		{"a small set", "1", "", h + "hdr.h.b = 5;", "", ""},
		{"an 8-bit set", "1", "", h + "hdr.h.c = 0xab;", "", ""},
		{"a 16-bit set", "1", "", h + "hdr.h.d = 0xffff;", "", ""},
		{"a slice set", "1", "", h + "hdr.h.b[7:0] = 0x55;", "", ""},
		{"+ 100", "1", "", h + "hdr.h.b = hdr.h.b + 100;", run, path},
		{"+ 7", "1", "", h + "hdr.h.b = hdr.h.b + 7;", "", ""},
		{"+ 8", "1", "", h + "hdr.h.b = hdr.h.b + 8;", run, path},
		{"+ 0xfffffff8", "1", "", h + "hdr.h.b = hdr.h.b + 0xfffffff8;", "", ""},
		{"- 8", "1", "", h + "hdr.h.b = hdr.h.b - 8;", "", ""},
		{"- 9", "1", "", h + "hdr.h.b = hdr.h.b - 9;", run, path},
		{"16-bit + 100", "1", "", h + "hdr.h.d = hdr.h.d + 100;", run, path},
		{"16-bit - 1", "1", "", h + "hdr.h.d = hdr.h.d - 1;", "", ""},
		{"| 7", "1", "", h + "hdr.h.b = hdr.h.b | 7;", "", ""},
		{"| 8", "1", "", h + "hdr.h.b = hdr.h.b | 8;", run, path},
		{"| the top bit", "1", "", h + "hdr.h.b = hdr.h.b | 0x80000000;", run, path},
		{"^ all ones", "1", "", h + "hdr.h.b = hdr.h.b ^ 0xffffffff;", "", ""},
		{"^ 0xfffffff9", "1", "", h + "hdr.h.b = hdr.h.b ^ 0xfffffff9;", "", ""},
		{"a constant without a hash", "1", "", "hdr.h.b = hdr.h.b + 100;", "", ""},
		// a 9-bit field, part of a container: a deposit-field's constant
		{"9 bits set to 196", "1", "", h + "hdr.h.p = 196;", run, path},
		{"9 bits set to 7", "1", "", h + "hdr.h.p = 7;", "", ""},
		{"9 bits set to 0x1f8", "1", "", h + "hdr.h.p = 0x1f8;", "", ""},
		{"9 bits set to 0x38", "1", "", h + "hdr.h.p = 0x38;", "", ""},
		{"9 bits set to 0x41", "1", "", h + "hdr.h.p = 0x41;", run, path},
		{"9 bits set to 0x1c0", "1", "", h + "hdr.h.p = 0x1c0;", "", ""},
		{"9 bits set to 0x100", "1", "", h + "hdr.h.p = 0x100;", "", ""},
		{"9 bits set to 196", "2", "", h + "hdr.h.p = 196;", run, path},
		{"9 bits set to 0x1f8", "2", "", h + "hdr.h.p = 0x1f8;", run, path},
		{"9 bits set to 0x1fc", "2", "", h + "hdr.h.p = 0x1fc;", "", ""},
		{"9 bits set to 0x38", "2", "", h + "hdr.h.p = 0x38;", "", ""},
		// Tofino 2: the range's top is the last 4 values; 16- and 32-bit sets take it only
		{"+ 0xfffffff8", "2", "", h + "hdr.h.b = hdr.h.b + 0xfffffff8;", run, path},
		{"- 4", "2", "", h + "hdr.h.b = hdr.h.b - 4;", "", ""},
		{"- 5", "2", "", h + "hdr.h.b = hdr.h.b - 5;", run, path},
		{"+ 7", "2", "", h + "hdr.h.b = hdr.h.b + 7;", "", ""},
		{"an & with 7", "2", "", h + "hdr.h.b = hdr.h.b & 7;", run, path},
		{"a 32-bit set of 0xfffff", "2", "", h + "hdr.h.b = 0xfffff;", run, path},
		{"a 32-bit set of 8", "2", "", h + "hdr.h.b = 8;", run, path},
		{"a 32-bit set of 5", "2", "", h + "hdr.h.b = 5;", "", ""},
		{"a 32-bit set of 0xfffffffd", "2", "", h + "hdr.h.b = 0xfffffffd;", "", ""},
		{"a 16-bit set of 0x100", "2", "", h + "hdr.h.d = 0x100;", run, path},
		{"a 16-bit set of 0xfffc", "2", "", h + "hdr.h.d = 0xfffc;", "", ""},
		{"an 8-bit set of 8", "2", "", h + "hdr.h.c = 8;", run, path},
		{"an 8-bit set of 0xab", "2", "", h + "hdr.h.c = 0xab;", run, path},
		{"an 8-bit set of 7", "2", "", h + "hdr.h.c = 7;", "", ""},
		{"^ 0xfffffffc", "2", "", h + "hdr.h.b = hdr.h.b ^ 0xfffffffc;", "", ""},
		// declared tables
		{"a keyless table, one hash action, the default", "1", "action a() { " + h + "} table t { actions = { a; } default_action = a(); }", "t.apply();", "", ""},
		{"a keyless table, two actions", "1", "action a() { " + h + "} action b() { hdr.h.b = 1; } table t { actions = { a; b; } default_action = a(); }", "t.apply();", multiple, multiple},
		{"a keyless table, two actions", "2", "action a() { " + h + "} action b() { hdr.h.b = 1; } table t { actions = { a; b; } default_action = a(); }", "t.apply();", multiple, multiple},
		{"a keyless table, the other action the default", "1", "action a() { " + h + "} action b() { hdr.h.b = 1; } table t { actions = { a; b; } default_action = b(); }", "t.apply();", multiple, multiple},
		{"a keyless table, no default action", "1", "action a() { " + h + "} table t { key = { } actions = { a; } }", "t.apply();", multiple, multiple},
		{"a keyless table, a parameter", "1", "action a(bit<32> x) { " + h + "hdr.h.b = x; } table t { actions = { a; } default_action = a(5); }", "t.apply();", data, data},
		{"a keyless table, a parameter, const default", "1", "action a(bit<32> x) { " + h + "hdr.h.b = x; } table t { actions = { a; } const default_action = a(5); }", "t.apply();", data, data},
		{"a keyless table, a constant", "1", "action a() { " + h + "hdr.h.b = hdr.h.b + 100; } table t { actions = { a; } default_action = a(); }", "t.apply();", data, data},
		{"a keyless table, a random number and a constant", "1", "Random<bit<16>>() rng; action a() { hdr.h.d = rng.get(); hdr.h.b = 0x12345678; } table t { actions = { a; } default_action = a(); }", "t.apply();", "requires rng", "requires rng"},
		{"a keyed table, the hash action the default", "1", "action a() { " + h + "} table t { key = { hdr.h.k : exact; } actions = { a; } default_action = a(); }", "t.apply();", deflt, deflt},
		{"a keyed table, a random number in the default action", "1", "Random<bit<16>>() rng; action a() { hdr.h.d = rng.get(); } table t { key = { hdr.h.k : exact; } actions = { a; } default_action = a(); }", "t.apply();", "as it requires a random number", "as it requires a random number"},
		{"a keyed table, the hash action @defaultonly", "1", "action a() { " + h + "} table t { key = { hdr.h.k : exact; } actions = { NoAction; @defaultonly a; } }", "t.apply();", only, only},
		{"a keyed table, NoAction the default", "1", "action a() { " + h + "} table t { key = { hdr.h.k : exact; } actions = { a; NoAction; } default_action = NoAction(); }", "t.apply();", "", ""},
		{"a keyed table, no default action", "1", "action a() { " + h + "} table t { key = { hdr.h.k : exact; } actions = { a; } }", "t.apply();", "", ""},
	}
	out := make([]tnaCase, 0, len(cases))
	for _, x := range cases {
		out = append(out, tnaCase{name: "hash path: " + x.name, gen: x.gen, src: hashPathProgram(x.decls, x.body), want: x.want, compiler: x.compiler})
	}
	return out
}

// TestTNAHashPathway: the front end refuses the tables whose hash or random number cannot reach
// their action (hashPathCases, compiled with bf-p4c by TestRealTNARules).
func TestTNAHashPathway(t *testing.T) {
	checkTNACases(t, hashPathCases())
}
