/* A table names an action declared after it (P4 declares before use): an error naming the
 * table and the action, not a crash of the checker's later passes (the TNA register rules'
 * walk over the control's tables met the unresolved action, 2026-11-30). */
#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(16) r;
    RegisterAction<bit<32>, bit<8>, bit<32>>(r) rd = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    table t {
        key = { md.idx : exact; }
        actions = { later; }
        const default_action = later();
        const entries = { 1 : later(); }
    }
    action later() { md.val = rd.execute(0); }
    apply {
        t.apply();
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
