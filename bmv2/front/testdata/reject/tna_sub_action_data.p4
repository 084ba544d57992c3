/* bf-p4c's rule on a subtraction's second operand (p4c 34b86e9,
 * phv/cluster_phv_operations.cpp): action data is refused there, as in p4/tna/netlock.p4's
 * lock_table action at a4e6788 ("meta.t_off = meta.tslot - (slot_t)left0"), through a cast, a
 * saturating subtraction, and an action data parameter passed on to another action. Accepted
 * twins are in TestTNASubActionData (tna_rules_test.go). */
#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    action off(bit<16> left) {
        md.idx = md.val - (bit<32>)left;
    }
    action room(bit<32> size) {
        md.val = md.idx |-| size;
    }
    action inner(bit<32> s) {
        md.wide = md.wide - (bit<64>)s;
    }
    action outer(bit<32> x) {
        inner(x);
    }
    table t { key = { hdr.eth.dst : exact; } actions = { off; room; outer; } }
    apply {
        t.apply();
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
