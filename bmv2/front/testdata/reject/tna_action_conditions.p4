/* bf-p4c's rule on conditions in actions (p4c 34b86e9, mau/instruction_selection.cpp and
 * mau/action_analysis.cpp): the three forms the compiler refused in p4/tna/netlock.p4, each
 * refused here as it refuses them; accepted twins are in TestTNAActionConditions
 * (tna_rules_test.go). */
#include "tna_skel.inc"
header ans_t { bit<8> auth; bit<8> x; }
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    // An if on a parameter that a direct call binds to a metadata field.
    action use_level(bit<32> level) {
        if (level == 0) { md.val = 1; } else { md.val = 2; }
    }
    // An if on a header field inside an action a table runs.
    action answer(bit<32> v) {
        if (hdr.eth.etype == 1) { md.val = v; }
    }
    table t { key = { hdr.eth.dst : exact; } actions = { answer; } }
    apply {
        // A ?: in the apply block, which p4c's front end wraps into an action.
        md.idx = (hdr.eth.etype == 0) ? md.val : 32w5;
        use_level(md.idx);
        t.apply();
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
