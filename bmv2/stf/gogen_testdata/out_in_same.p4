/* Go backend regression: one variable as an out argument and, after it, as an in argument.
 * The generated code cleared the out argument before copying in the in argument, so h.c got 0,
 * not 3 (p4c sample gauntlet_side_effect_order_2). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<32> a; bit<32> b; bit<64> w; bit<16> x; bit<8> c; }
struct headers_t { h_t h; }
struct meta_t { }
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action a(out bit<8> o, in bit<8> i) { hdr.h.c = i; }
    apply { bit<8> t = 3; a(t, t); sm.egress_spec = 0; }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
