#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        for (bit<8> i = 0; i < 4; i = i + 1) {
            hdr.h.f8 = i;
        }
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
