#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a(bit<8> v) { hdr.h.f8 = v; }
    action b() { }
    table t {
        key = { hdr.h.f8: exact; hdr.h.f16: range; }
        actions = { a; }
        const entries = {
            (1, 2 .. 5): a(3);
            (2, 7): b();
            (3, 1 &&& 1): a(meta.idx[7:0]);
        }
    }
    apply { t.apply(); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
