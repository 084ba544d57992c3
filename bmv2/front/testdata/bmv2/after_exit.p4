// want: Program can not be implemented on this target since it contains a path from table I.t back to itself
#include "head.inc"
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    action nop() { }
    table t { key = { hdr.h.a : exact; } actions = { set; nop; } default_action = nop(); }
    table u { key = { hdr.h.b : exact; } actions = { set; nop; } default_action = nop(); }
    apply {
        if (hdr.h.c == 1) {
            t.apply();
            exit;
        }
        t.apply();
    }
}
#include "skel.inc"
