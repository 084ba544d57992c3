// Action profiles and selectors: indirect tables whose entries point to members or groups.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  k;
    bit<16> flow;
    bit<8>  res;
}
struct headers_t { h_t h; }
struct meta_t { bit<8> x; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_out(bit<8> v, bit<9> port) { hdr.h.res = v; sm.egress_spec = port; }
    action_selector(HashAlgorithm.identity, 32w64, 32w16) sel;

    table ecmp {
        key = { hdr.h.k: exact; hdr.h.flow: selector; }
        actions = { set_out; NoAction; }
        implementation = sel;
    }
    table prof {
        key = { hdr.h.k: exact; }
        actions = { set_out; NoAction; }
        @name("prof_action_profile") implementation = action_profile(32w16);
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k < 100) {
            ecmp.apply();
        } else {
            prof.apply();
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
