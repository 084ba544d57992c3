#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t {
        key = { hdr.h.f8: lpm; }
        actions = { NoAction; }
        const entries = {
            0x10 &&& 0xf1: NoAction();
        }
    }
    apply { t.apply(); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
