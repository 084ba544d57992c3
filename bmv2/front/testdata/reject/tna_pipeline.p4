#include "tna_skel.inc"
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply { }
}
/* the egress control's intrinsic metadata has direction inout, not in */
control BadEg(inout hdr_t hdr, inout md_t md, inout egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}
/* md is not optional */
control ShortIgDeparser(packet_out pkt, inout hdr_t hdr) {
    apply { pkt.emit(hdr); }
}
Pipeline(IgParser(), Ing(), ShortIgDeparser(), EgParser(), BadEg(), EgDeparser()) pipe;
/* a Switch takes Pipelines */
Switch(Ing()) main;
