/* bf-p4c's rule on a stateful ALU's inputs (p4c 34b86e9, backends/tofino): the register actions
 * that run on one Register read at most two PHV inputs together, a slice counting as an input
 * of its own; each case here is refused by the compiler on both targets (2026-12-01). The
 * accepted twins are in accept/tna_salu_inputs.p4. */
#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* a third input read only in a condition, by a register action of its own */
    Register<pair_t, bit<10>>(1024) three;
    RegisterAction<pair_t, bit<10>, bit<32>>(three) t_add = {
        void apply(inout pair_t v, out bit<32> rv) { v.lo = v.lo + md.val; rv = v.lo; }
    };
    RegisterAction<pair_t, bit<10>, bit<32>>(three) t_sub = {
        void apply(inout pair_t v, out bit<32> rv) { v.hi = v.hi - md.idx; rv = v.hi; }
    };
    RegisterAction<pair_t, bit<10>, bit<32>>(three) t_clr = {
        void apply(inout pair_t v) { if (hdr.eth.dst[31:0] != 0) { v.lo = 0; v.hi = 0; } }
    };
    /* a field and two slices of another: three inputs */
    Register<pair_t, bit<10>>(1024) sliced;
    RegisterAction<pair_t, bit<10>, bit<32>>(sliced) s_add = {
        void apply(inout pair_t v, out bit<32> rv) { v.lo = v.lo + md.idx; rv = v.lo; }
    };
    RegisterAction<pair_t, bit<10>, bit<32>>(sliced) s_sub = {
        void apply(inout pair_t v, out bit<32> rv) {
            v.lo = v.lo - (bit<32>)md.val[31:16];
            v.hi = v.hi - (bit<32>)md.val[15:0];
            rv = v.hi;
        }
    };
    action a1() { md.val = t_add.execute(md.idx[9:0]); }
    action a2() { md.val = t_sub.execute(md.idx[9:0]); }
    action a3() { t_clr.execute(md.idx[9:0]); }
    table t {
        key = { hdr.eth.etype : exact; }
        actions = { a1; a2; a3; NoAction; }
        const default_action = NoAction();
        size = 16;
    }
    apply {
        t.apply();
        if (hdr.eth.etype == 1) {
            hdr.eth.src[31:0] = s_add.execute(md.idx[9:0]);
        } else {
            hdr.eth.src[31:0] = s_sub.execute(md.idx[9:0]);
        }
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
