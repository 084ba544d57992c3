#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.f8 = missing_one;
        hdr.h.f16 = hdr.h.f8;
        missing_two.apply();
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
