// want: hdr.h.a / 7: could not evaluate expression at compilation time
#include "head.inc"
// bmv2 has no division: p4c-bm2-ss's mid end refuses a / or % it cannot fold (division.p4),
// after turning those by a power of two into shifts and masks (division_folded.p4).
bit<8> half(in bit<8> v) { return v / 2; }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.b = half(hdr.h.b) + hdr.h.c % 16;
        hdr.h.c = hdr.h.a / 7 + hdr.h.b % 5;
    }
}
#include "skel.inc"
