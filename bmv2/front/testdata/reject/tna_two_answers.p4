/* bf-p4c's rule on register actions' answers (p4c 34b86e9, backends/tofino): an action writes
 * the answer of at most one register action ("At most one stateful ALU operation with a given
 * address is allowed per action"), whether the answers go to two fields or to two slices of
 * one; each case is refused by the compiler on both targets, alone (2026-12-01). The accepted
 * twins are in accept/tna_one_answer.p4. */
#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<10>>(1024) ra;
    Register<bit<32>, bit<10>>(1024) rb;
    RegisterAction<bit<32>, bit<10>, bit<32>>(ra) ra_rd = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<10>, bit<32>>(rb) rb_rd = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    /* two answers into two fields */
    action fields() {
        md.val = ra_rd.execute(md.idx[9:0]);
        md.idx = rb_rd.execute(md.idx[9:0]);
    }
    /* two answers into two slices of one field */
    action slices() {
        md.wide[63:32] = ra_rd.execute(md.idx[9:0]);
        md.wide[31:0] = rb_rd.execute(md.idx[9:0]);
    }
    table t {
        key = { hdr.eth.etype : exact; }
        actions = { fields; slices; NoAction; }
        const default_action = NoAction();
        size = 16;
    }
    apply {
        md.idx = (bit<32>)hdr.eth.dst[47:32];
        t.apply();
        hdr.eth.src[47:16] = md.val ^ md.wide[63:32];
        hdr.eth.dst[31:0] = md.idx ^ md.wide[31:0];
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
