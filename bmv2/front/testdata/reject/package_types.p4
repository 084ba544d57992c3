#include "skel.inc"
struct other_t { bit<8> x; }
control I(inout headers hdr, inout other_t meta, inout standard_metadata_t sm) {
    apply { }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
