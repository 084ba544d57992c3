/* Go backend regression: a concatenation under a shift. The generator emitted
 * (a)<<32 | b<<8 for (a ++ b) << 8 (found by dataplane TestGenDifferential: token_of in
 * p4/netlock.p4 lost the high bits of the grant counter). (1 ++ 2) << 8 = 0x0000010000000200. */
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
    apply { hdr.h.w = (hdr.h.a ++ hdr.h.b) << 8; sm.egress_spec = 0; }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
