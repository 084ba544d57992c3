/* bf-p4c's rules on registers and casts (p4c 34b86e9, backends/tofino): each is refused
 * here as the compiler refuses it; the accepted twins are in accept/tna_register_views.p4. */
#include "tna_skel.inc"
struct wide_t {
    bit<32> a;
    bit<32> b;
    bit<32> c;
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    /* five register actions on one register: a stateful ALU holds four instructions */
    Register<bit<32>, bit<32>>(1024) five;
    RegisterAction<bit<32>, bit<32>, bit<32>>(five) f1 = { void apply(inout bit<32> v) { v = 1; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(five) f2 = { void apply(inout bit<32> v) { v = 2; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(five) f3 = { void apply(inout bit<32> v) { v = 3; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(five) f4 = { void apply(inout bit<32> v) { v = 4; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(five) f5 = { void apply(inout bit<32> v) { v = 5; } };
    /* three register actions and two actions calling write: five again */
    Register<bit<32>, bit<32>>(1024) mixed;
    RegisterAction<bit<32>, bit<32>, bit<32>>(mixed) m1 = { void apply(inout bit<32> v) { v = 1; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(mixed) m2 = { void apply(inout bit<32> v) { v = 2; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(mixed) m3 = { void apply(inout bit<32> v) { v = 3; } };
    action w1() { mixed.write(md.idx, 7); }
    action w2() { mixed.write(md.idx, 8); md.val = mixed.read(md.idx); }
    /* a cell width the stateful ALU does not have */
    Register<bit<24>, bit<32>>(1024) odd;
    RegisterAction<bit<24>, bit<32>, bit<24>>(odd) o1 = { void apply(inout bit<24> v) { v = v + 1; } };
    Register<wide_t, bit<32>>(1024) three;
    RegisterAction<wide_t, bit<32>, bit<32>>(three) t1 = { void apply(inout wide_t v) { v.a = 1; } };
    /* a view of the cells that does not cover the same memory: 8-bit cells, same index width */
    Register<bit<32>, bit<10>>(1024) words;
    RegisterAction<bit<8>, bit<10>, bit<8>>(words) bytes = { void apply(inout bit<8> v) { v = 1; } };
    apply {
        f1.execute(md.idx); m1.execute(md.idx); o1.execute(md.idx); t1.execute(md.idx);
        bytes.execute(0);
        w1(); w2();
        /* a widening cast of a narrowing cast, also once the cast moves into the & */
        md.val = (bit<32>)((bit<16>)md.val & 0x7fff);
        md.val = (bit<32>)(bit<16>)md.val;
        /* three levels of casts */
        md.val = (bit<32>)(bit<8>)(bit<16>)md.idx;
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
#include "tna_main.inc"
