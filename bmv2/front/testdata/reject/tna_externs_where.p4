#include "tna_skel.inc"
/* a control with a deparser extern that a match-action control applies */
control MirrorSub(in md_t md) {
    Mirror(1) m2;
    apply { m2.emit(10w2); }
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Mirror(1) mirror;
    Checksum() ck;
    Resubmit(1) resubmit;
    apply {
        /* deparser externs in a match-action control */
        mirror.emit(10w1);
        resubmit.emit();
        /* a parser extern */
        bool ok = ck.verify();
        MirrorSub.apply(md);
    }
}
control IgDep2(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Counter<bit<32>, bit<32>>(16, CounterType_t.PACKETS) cnt;
    apply {
        /* a match-action extern in a deparser */
        cnt.count(0);
        pkt.emit(hdr);
    }
}
Pipeline(IgParser(), Ing(), IgDep2(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
