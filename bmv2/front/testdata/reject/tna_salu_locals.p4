/* bf-p4c's rule on a register action's locals (p4c 34b86e9, mau/stateful_alu.cpp after the mid
 * end's LocalCopyPropagation), as p4/tna/netlock.p4's q_upd broke it: accepted twins are in
 * TestTNARegisterActionLocals (tna_rules_test.go). */
#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<pair_t, bit<32>>(1024) q;
    RegisterAction<pair_t, bit<32>, bit<32>>(q) q_upd = {
        void apply(inout pair_t v, out bit<32> rv) {
            /* 16-bit halves of a 32-bit half: the stateful ALU's operands are 32 bits */
            bit<16> lo = v.lo[15:0];
            bit<16> hi = v.lo[31:16];
            /* lo is still v.lo[15:0] here: a slice of the register value in a condition */
            if (lo == 0) {
                hi = hi + 1;
            }
            v.hi = (bit<32>)hi;
            rv = v.lo;
        }
    };
    apply {
        md.val = q_upd.execute(md.idx);
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
