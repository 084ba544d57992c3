#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a() { }
    action a() { }
    apply { a(); }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
