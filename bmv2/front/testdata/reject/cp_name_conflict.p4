#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    @name(".same") action a() { }
    @name(".same") action b() { }
    table t {
        key = { hdr.h.f8: exact; }
        actions = { a; b; }
    }
    apply { t.apply(); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
