#include "skel.inc"
struct pair_t { bit<8> a; bit<8> b; }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a(bit<8> cp, inout bit<8> x) { x = cp; }
    action b(pair_t p) { hdr.h.f8 = p.a; }
    apply { }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
