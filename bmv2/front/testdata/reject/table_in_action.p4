#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    table t {
        key = { hdr.h.f8: exact; }
        actions = { NoAction; }
    }
    action a() { t.apply(); }
    apply { a(); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
