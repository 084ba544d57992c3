#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(16) r;
    apply {
        r.read(meta.idx);
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
