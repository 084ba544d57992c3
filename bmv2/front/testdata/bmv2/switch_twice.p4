// want: Program is not supported by this target, because table I.t has multiple successors
#include "head.inc"
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { hdr.h.b = v; }
    action nop() { }
    table t { key = { hdr.h.a : exact; } actions = { set; nop; } default_action = nop(); }
    table u { key = { hdr.h.b : exact; } actions = { set; nop; } default_action = nop(); }
    apply {
        if (hdr.h.c == 1) {
            switch (t.apply().action_run) {
                set: { meta.x = 1; }
                default: { }
            }
        } else {
            t.apply();
        }
        sm.egress_spec = 1;
    }
}
#include "skel.inc"
