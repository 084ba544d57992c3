/* A table whose action has a parameter annotated @secret (netlock.p4's rack key is one): the
 * P4Runtime server reads it back as zero to anyone but the primary controller (auth.go). */
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> type;
}
struct headers_t { eth_t eth; }
struct metadata_t { bit<64> key; bit<32> ip; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    state start { pkt.extract(hdr.eth); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action set_cfg(@secret bit<64> key, bit<32> ip) { meta.key = key; meta.ip = ip; }
    action unset() { }
    table cfg {
        key = { hdr.eth.type: exact; }
        actions = { set_cfg; unset; }
        default_action = unset();
    }
    apply { cfg.apply(); }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.eth); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
