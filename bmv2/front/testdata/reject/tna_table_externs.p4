/* bf-p4c 9.13.4's rules on the registers and hashes of a table's actions (p4c 34b86e9,
 * mau/instruction_selection.cpp; each verdict checked with the compiler on both targets, one
 * table at a time, 2026-11-30): an action that runs one of the table's registers runs all of
 * them; the default action computes no hash. The accepted twins are in
 * accept/tna_table_externs.p4. */
#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<8>>(16) r0;
    Register<bit<32>, bit<8>>(16) r1;
    RegisterAction<bit<32>, bit<8>, bit<32>>(r0) rd0 = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(r1) rd1 = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    Hash<bit<8>>(HashAlgorithm_t.IDENTITY) h;
    action only0() { md.val = rd0.execute(0); }
    action only1() { md.val = rd1.execute(0); }
    table split_use {
        key = { md.idx : exact; }
        actions = { only0; only1; }
        size = 16;
    }
    action hashed() { hdr.eth.etype[7:0] = h.get({md.idx}); }
    table hash_default {
        key = { md.idx : exact; }
        actions = { hashed; }
        default_action = hashed();
        size = 16;
    }
    apply {
        split_use.apply();
        hash_default.apply();
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
