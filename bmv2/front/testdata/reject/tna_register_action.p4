#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<32>>(1024) reg;
    Register<pair_t, bit<32>>(1024) pairs;
    /* no implementation of apply */
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) bare;
    /* wrong directions and types */
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) wrong = {
        void apply(in bit<32> value, out bit<16> rv) { rv = 0; }
    };
    /* a method that is not abstract, and apply twice */
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) twice = {
        void apply(inout bit<32> value) { value = value + 1; }
        void apply(inout bit<32> value) { value = value + 2; }
        bit<32> execute(in bit<32> index) { return 0; }
    };
    /* the cell type must be the register's */
    RegisterAction<bit<32>, bit<32>, bit<32>>(pairs) mismatch = {
        void apply(inout bit<32> value) { value = 1; }
    };
    /* the apply body runs on the register ALU: no other cells, no tables */
    RegisterAction<bit<32>, bit<32>, bit<32>>(reg) other = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = pairs.read(0).lo;
            value = value + 1;
        }
    };
    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
