#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.f8 = undefined_thing;
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
