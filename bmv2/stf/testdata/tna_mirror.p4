/* TNA mirroring: ingress-to-egress (the packet as it arrived) and egress-to-egress (the
 * packet as deparsed), each copy with a one-byte mirror header in front, to the session's
 * port; the egress parser tells mirror copies from bridged packets by their first byte. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

typedef bit<8> pkt_type_t;
const pkt_type_t PKT_TYPE_NORMAL = 1;
const pkt_type_t PKT_TYPE_MIRROR = 2;

const MirrorType_t MIRROR_TYPE_I2E = 1;
const MirrorType_t MIRROR_TYPE_E2E = 2;

struct metadata_t {
    bit<1> do_ing_mirroring;
    MirrorId_t ing_mir_ses;
    MirrorId_t egr_mir_ses;
    pkt_type_t pkt_type;
}

header mirror_bridged_metadata_h {
    pkt_type_t pkt_type;
    bit<7> pad;
    bit<1> do_egr_mirroring;
    bit<6> pad2;
    MirrorId_t egr_mir_ses;
}

header mirror_h {
    pkt_type_t pkt_type;
}

struct headers_t {
    mirror_bridged_metadata_h bridged_md;
    ethernet_h ethernet;
}

parser SwitchIngressParser(packet_in pkt, out headers_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchIngress(inout headers_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    action set_md(PortId_t dest_port, bit<1> ing_mir, MirrorId_t ing_ses, bit<1> egr_mir, MirrorId_t egr_ses) {
        ig_tm_md.ucast_egress_port = dest_port;
        ig_md.do_ing_mirroring = ing_mir;
        ig_md.ing_mir_ses = ing_ses;
        hdr.bridged_md.do_egr_mirroring = egr_mir;
        hdr.bridged_md.egr_mir_ses = egr_ses;
    }

    table mirror_fwd {
        key = {
            ig_intr_md.ingress_port : exact;
        }
        actions = {
            set_md;
        }
        size = 512;
    }

    apply {
        hdr.bridged_md.setValid();
        hdr.bridged_md.pkt_type = PKT_TYPE_NORMAL;
        mirror_fwd.apply();
        if (ig_md.do_ing_mirroring == 1) {
            ig_dprsr_md.mirror_type = MIRROR_TYPE_I2E;
            ig_md.pkt_type = PKT_TYPE_MIRROR;
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror(MIRROR_TYPE_I2E) mirror;

    apply {
        if (ig_dprsr_md.mirror_type == MIRROR_TYPE_I2E) {
            mirror.emit<mirror_h>(ig_md.ing_mir_ses, {ig_md.pkt_type});
        }
        pkt.emit(hdr);
    }
}

struct eg_metadata_t {
    MirrorId_t egr_mir_ses;
    pkt_type_t pkt_type;
    bool mirrored;
}

parser SwitchEgressParser(packet_in pkt, out headers_t hdr, out eg_metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    TofinoEgressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, eg_intr_md);
        transition parse_metadata;
    }

    state parse_metadata {
        mirror_h mirror_md = pkt.lookahead<mirror_h>();
        transition select(mirror_md.pkt_type) {
            PKT_TYPE_MIRROR : parse_mirror_md;
            PKT_TYPE_NORMAL : parse_bridged_md;
            default : accept;
        }
    }

    state parse_bridged_md {
        pkt.extract(hdr.bridged_md);
        transition parse_ethernet;
    }

    state parse_mirror_md {
        mirror_h mirror_md;
        pkt.extract(mirror_md);
        eg_md.mirrored = true;
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchEgress(inout headers_t hdr, inout eg_metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md,
                     in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                     inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                     inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    apply {
        // Every copy says which port it leaves on in the last byte of its destination.
        hdr.ethernet.dst_addr[7:0] = eg_intr_md.egress_port[7:0];
        if (eg_md.mirrored) {
            hdr.ethernet.ether_type = 0x9999;
        } else if (hdr.bridged_md.do_egr_mirroring == 1) {
            eg_md.egr_mir_ses = hdr.bridged_md.egr_mir_ses;
            eg_md.pkt_type = PKT_TYPE_MIRROR;
            eg_dprsr_md.mirror_type = MIRROR_TYPE_E2E;
        }
    }
}

control SwitchEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t eg_md,
                             in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Mirror(MIRROR_TYPE_E2E) mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_TYPE_E2E) {
            mirror.emit<mirror_h>(eg_md.egr_mir_ses, {eg_md.pkt_type});
        }
        pkt.emit(hdr.ethernet);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
