#include "skel.inc"
control I(in headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
