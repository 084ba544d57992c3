// want: ok
#include "head.inc"
control Sub(inout headers_t hdr) {
    action set(bit<8> v) { hdr.h.b = v; }
    action nop() { }
    table w { key = { hdr.h.a : exact; } actions = { set; nop; } default_action = nop(); }
    apply { w.apply(); }
}
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    Sub() one;
    Sub() two;
    apply {
        one.apply(hdr);
        meta.x = 1;
        two.apply(hdr);
        sm.egress_spec = 1;
    }
}
#include "skel.inc"
