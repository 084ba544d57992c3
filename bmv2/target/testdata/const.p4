/* A table with const entries, for reading them back through the Device. */
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  a;
    bit<16> b;
    bit<8>  c;
}

struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }

control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) {
    action fwd(bit<9> port) { std.egress_spec = port; }
    action drop() { mark_to_drop(std); }
    table t {
        key = {
            hdr.h.a : exact;
            hdr.h.b : ternary;
            hdr.h.c : range;
        }
        actions = { fwd; drop; }
        default_action = drop();
        const entries = {
            (1, 0x0100 &&& 0xff00, 0 .. 255) : fwd(2);
            (2, _, 5 .. 9) : fwd(3);
        }
    }
    apply { t.apply(); }
}

control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t std) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
