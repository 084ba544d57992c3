// Const entries with p4c's non-standard @priority annotation, as bmv2 reads it: the numerically
// smallest priority wins; an entry without the annotation takes its 1-based position. Without any
// annotation the earlier entry wins (the P4 spec's rule). Our own test, in the spirit of p4c's
// table-entries-priority-bmv2.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> k; bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct meta_t { }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_a(bit<8> v) { hdr.h.a = v; }
    action set_b(bit<8> v) { hdr.h.b = v; }
    table annotated {
        key = { hdr.h.k : ternary; }
        actions = { set_a; NoAction; }
        default_action = NoAction();
        const entries = {
            0x1111 &&& 0x000F : set_a(1) @priority(3);
            0x1181            : set_a(2);
            0x1181 &&& 0xF00F : set_a(3) @priority(1);
        }
    }
    table positional {
        key = { hdr.h.k : ternary; }
        actions = { set_b; NoAction; }
        default_action = NoAction();
        const entries = {
            0x0001 &&& 0x000F : set_b(1);
            0x0000 &&& 0x0000 : set_b(2);
        }
    }
    apply {
        annotated.apply();
        positional.apply();
        sm.egress_spec = 2;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
