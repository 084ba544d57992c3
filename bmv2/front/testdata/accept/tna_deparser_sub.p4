/* A deparser that applies a control of its own: mirror.emit, resubmit.emit and digest.pack in
 * that control are deparser calls (p4c inlines the control into the deparser), as bf-p4c
 * accepts them. reject/tna_externs_where.p4 has the same control applied by a match-action
 * control, refused. */
#include <core.p4>
#include <tna.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header mirror_h {
    bit<8> kind;
}
struct hdr_t { eth_t eth; }
struct md_t {
    MirrorId_t session;
    mirror_h mh;
}

parser IgParser(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        md.session = 10w5;
        md.mh.setValid();
        md.mh.kind = 1;
        ig_dprsr_md.mirror_type = 1;
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}

control MirrorIt(in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit(md.session, md.mh);
        }
    }
}

control IgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    MirrorIt() mirror_it;
    apply {
        mirror_it.apply(md, ig_dprsr_md);
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
