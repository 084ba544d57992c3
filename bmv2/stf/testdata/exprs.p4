// Expressions: signed and unsigned arithmetic, saturation, shifts, concatenation, slices,
// casts with sign extension, signed comparisons, 128-bit values, functions with copy-out.
#include <core.p4>
#include <v1model.p4>

header in_t {
    bit<8>  a;
    bit<8>  b;
    int<8>  s;
    int<8>  t;
}
header out_t {
    bit<8>   add;
    bit<8>   sub;
    bit<8>   satadd;
    bit<8>   satsub;
    int<8>   ssatadd;
    int<8>   ssatsub;
    int<8>   sshr;
    bit<8>   shl;
    bit<16>  cat;
    bit<4>   slice;
    bit<4>   pad;
    bit<16>  sext;
    bit<8>   flags;
    bit<128> wide;
    bit<8>   fn;
}
struct headers_t { in_t i; out_t o; }
struct meta_t { bit<8> x; }

bit<8> twice(in bit<8> v, out bit<8> half) {
    half = v >> 1;
    return v << 1;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.o.setValid();
        hdr.o.add = hdr.i.a + hdr.i.b;
        hdr.o.sub = hdr.i.a - hdr.i.b;
        hdr.o.satadd = hdr.i.a |+| hdr.i.b;
        hdr.o.satsub = hdr.i.a |-| hdr.i.b;
        hdr.o.ssatadd = hdr.i.s |+| hdr.i.t;
        hdr.o.ssatsub = hdr.i.s |-| hdr.i.t;
        hdr.o.sshr = hdr.i.s >> 2;
        hdr.o.shl = hdr.i.a << hdr.i.b[2:0];
        hdr.o.cat = hdr.i.a ++ hdr.i.b;
        hdr.o.slice = hdr.i.a[7:4];
        hdr.o.sext = (bit<16>)(int<16>)hdr.i.s;
        bit<8> f = 0;
        if (hdr.i.s < hdr.i.t) { f = f | 1; }
        if (hdr.i.a < hdr.i.b) { f = f | 2; }
        if ((hdr.i.a == 0) || (hdr.i.b != 0 && hdr.i.s > 0)) { f = f | 4; }
        f = (hdr.i.a > 0x80) ? f | 8 : f;
        hdr.o.flags = f;
        hdr.o.wide = ((bit<128>)hdr.i.a << 120) + 128w0xFFFFFFFFFFFFFFFF + 1;
        bit<8> h;
        hdr.o.fn = twice(hdr.i.b, h) + h;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.i); pkt.emit(hdr.o); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
