#include "skel.inc"
#define NARROW hdr.h.f8
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.f32 = NARROW;
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
