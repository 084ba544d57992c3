// want: Program is not supported by this target, because table I.t has multiple successors
// p4c moves the statements after an if whose branch exits into its else branch
// (MoveToElseAfterBranch): t's two applications lead to the exit's action and to the end.
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
