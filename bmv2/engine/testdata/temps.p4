// Reads of locals that are declared without an initializer, out parameters a function does
// not write and control-level locals: bmv2 gives zeros. TestStaleTemps runs it over slots
// poisoned between packets (the engine clears only headers and metadata when a packet starts).
#include <core.p4>
#include <v1model.p4>

header t_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<8>  d;
    bit<16> e;
    bit<8>  f;
}
header h2_t { bit<8> x; }
struct headers_t { t_t t; }
struct meta_t { bit<8> m; }
struct pair_t { bit<8> p; bit<8> q; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.t); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

void untouched(out bit<8> o) { }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    bit<8> cl;
    pair_t cs;
    action act() {
        bit<8> al;
        hdr.t.b = al;
    }
    apply {
        bit<8> x;
        hdr.t.a = x;
        act();
        bit<8> o = 7;
        untouched(o);
        hdr.t.c = o;
        hdr.t.d = cl + cs.p + cs.q;
        bit<16> w;
        hdr.t.e = w;
        h2_t h;
        hdr.t.f = h.isValid() ? 8w1 : 8w0;
        sm.egress_spec = 2;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.t); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
