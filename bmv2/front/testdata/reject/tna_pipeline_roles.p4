#include "tna_skel.inc"
header resub_t {
    bit<64> a;
    bit<8>  b;
}
header pm_t {
    bit<64> x;
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { }
}
control IgDep2(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit(1) resubmit;
    apply {
        /* more than 64 bits of resubmit data */
        resub_t r = { a = 0, b = 0 };
        resubmit.emit(r);
        pkt.emit(hdr);
    }
}
parser EgParser2(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        /* port metadata exists in the ingress parser only */
        pm_t pm = port_metadata_unpack<pm_t>(pkt);
        transition accept;
    }
}
control EgDep2(packet_out pkt, inout hdr_t hdr, in md_t md) {
    Digest<md_t>(1) dg;
    apply {
        /* digests are packed by the ingress deparser */
        dg.pack(md);
        pkt.emit(hdr);
    }
}
Pipeline(IgParser(), Ing(), IgDep2(), EgParser2(), Eg(), EgDep2()) pipe;
Switch(pipe) main;
