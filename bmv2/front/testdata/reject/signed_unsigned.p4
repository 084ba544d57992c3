#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        int<8> s = -1;
        hdr.h.f8 = s;
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
