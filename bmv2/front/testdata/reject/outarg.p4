#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) r;
    apply {
        r.read(hdr.h.f32 + 1, 0);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
