#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (meta.flag) {
            hdr.h.f8 = 1;
        }
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
