#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(in bit<8> v) {
        v = 3;
        hdr.h.f8 = v;
    }
    apply {
        set(hdr.h.f8);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
