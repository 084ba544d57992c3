// want: ok
#include "head.inc"
// Divisions p4c's constant folding and strength reduction remove (see division.p4).
const bit<8> TEN = 10;
bit<8> half(in bit<8> v) { return v / 2; }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> d) { hdr.h.b = d / 1 + hdr.h.a % 8; }
    table t { key = { hdr.h.a : exact; } actions = { set; } default_action = set(TEN / 3); }
    apply {
        hdr.h.b = half(hdr.h.b) + hdr.h.c % 16 + (TEN % 4) + 0 / hdr.h.a;
        t.apply();
    }
}
#include "skel.inc"
