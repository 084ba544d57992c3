#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (1) { }
        if (hdr.h.f8 == 1 || meta.idx) { }
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
