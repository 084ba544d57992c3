// One-key exact tables, the engine's one-key lookup: a 16-bit key and a 96-bit key (whose
// values may or may not fit 64 bits). sel 0 applies t16, sel 1 t96; res is the entry's value,
// 0xEE on a miss.
#include <core.p4>
#include <v1model.p4>

header req_t {
    bit<8>  sel;
    bit<16> k16;
    bit<96> k96;
    bit<8>  res;
}
struct headers_t { req_t r; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.r); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.r.res = v; }
    table t16 {
        key = { hdr.r.k16: exact; }
        actions = { set; }
        default_action = set(0xEE);
    }
    table t96 {
        key = { hdr.r.k96: exact; }
        actions = { set; }
        default_action = set(0xEE);
    }
    apply {
        if (hdr.r.sel == 0) { t16.apply(); } else { t96.apply(); }
        sm.egress_spec = sm.ingress_port;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.r); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
