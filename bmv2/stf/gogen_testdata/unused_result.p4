/* Go backend regression: a function called as a statement, its result discarded. The
 * generated package did not compile ("declared and not used"; p4c samples
 * gauntlet_side_effect_order_4, gauntlet_switch_shadowing, issue2221). f writes 1 into x. */
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
bit<16> f(inout bit<16> v) { v = 1; return 2; }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply { f(hdr.h.x); sm.egress_spec = 0; }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
