#include "skel.inc"
struct stk_t { h_t[2] hs; }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    stk_t s;
    apply {
        s.hs.next.f8 = 1;
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
