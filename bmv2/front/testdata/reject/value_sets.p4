/* Value sets used wrongly: a set whose fields do not fit the select's keys (type, count), a
 * set used as a value, an element type that is not allowed. */
#include <core.p4>
#include <v1model.p4>
header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
struct headers_t { eth_t eth; }
struct meta_t { bit<16> t; }
struct two_t {
    bit<16> a;
    bit<16> b;
}
parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<8>>(4) narrow;
    value_set<two_t>(4) two;
    value_set<eth_t>(4) headers;
    state start {
        pkt.extract(hdr.eth);
        meta.t = narrow;
        transition select(hdr.eth.etype) {
            narrow: accept;
            two: accept;
            default: reject;
        }
    }
}
control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
