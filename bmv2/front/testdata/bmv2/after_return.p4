// want: ok
// p4c moves the statements after an if whose branch returns into its else branch
// (MoveToElseAfterBranch); nothing reads the return flag then, so both applications of t lead
// to the end, and p4c-bm2-ss compiles it.
#include "head.inc"
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    action nop() { }
    table t { key = { hdr.h.a : exact; } actions = { set; nop; } default_action = nop(); }
    table u { key = { hdr.h.b : exact; } actions = { set; nop; } default_action = nop(); }
    apply {
        if (hdr.h.c == 1) {
            t.apply();
            return;
        }
        t.apply();
    }
}
#include "skel.inc"
