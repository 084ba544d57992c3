#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.h.f32: lpm; }
        actions = { fwd; }
        default_action = fwd;
    }
    apply { t.apply(); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
