// Engine techniques of round 3 (docs/performance.md): an action with a return statement,
// called directly and from a table, continues its caller; operands read inline keep P4's
// left-to-right order against a function that writes them; chains of slot tests; fields
// across 64-bit words emitted word by word.
#include <core.p4>
#include <v1model.p4>

header in_t {
    bit<8>  a;
    bit<8>  b;
    bit<8>  c;
    bit<8>  d;
}
// 88 bits: r2 and w crosses the first 64-bit word.
header out_t {
    bit<8>  r1;
    bit<8>  r2;
    bit<8>  order;
    bit<8>  chain;
    bit<8>  tbl;
    bit<20> odd;
    bit<28> w;
    bit<8>  after;
}
struct headers_t { in_t i; out_t o; }
struct meta_t { bit<8> v; }

bit<8> bump(inout bit<8> x) {
    x = x + 8w10;
    return 8w1;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action early(bit<8> k) {
        hdr.o.r1 = k;
        if (hdr.i.a == 8w1) {
            return;
        }
        hdr.o.r1 = k + 8w1;
    }
    action mark() {
        hdr.o.tbl = 8w7;
        if (hdr.i.b != 8w0) {
            return;
        }
        hdr.o.tbl = 8w9;
    }
    table t {
        key = { hdr.i.c: exact; }
        actions = { mark; NoAction; }
        const entries = { 8w5 : mark(); }
        default_action = NoAction();
    }
    apply {
        hdr.o.setValid();
        early(8w20);
        hdr.o.r2 = hdr.o.r1 + 8w2;
        meta.v = hdr.i.d;
        hdr.o.order = meta.v + bump(meta.v);
        hdr.o.order = hdr.o.order + meta.v;
        if (hdr.i.a == 8w1 && hdr.i.b != 8w0 && hdr.i.c == 8w5) {
            hdr.o.chain = 8w1;
        } else if (hdr.i.a == 8w2 || hdr.i.b == 8w3) {
            hdr.o.chain = 8w2;
        } else {
            hdr.o.chain = 8w3;
        }
        t.apply();
        hdr.o.odd = hdr.i.a ++ (bit<12>)hdr.i.b;
        hdr.o.w = hdr.i.a ++ hdr.i.b ++ hdr.i.c ++ hdr.i.d[3:0];
        hdr.o.after = (hdr.i.a == 8w1) ? 8w0xAA : hdr.i.d;
        sm.egress_spec = 9w1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
