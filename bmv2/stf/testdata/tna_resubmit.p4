/* TNA resubmission with port metadata: the first pass reads the port metadata
 * (port_metadata_unpack), looks the port up and resubmits the packet with 64 bits of data;
 * the second pass parses that data in place of the port metadata and writes it into the
 * packet. What the first pass changed in the packet is lost, as on Tofino. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

const ResubmitType_t RESUBMIT_A = 1;

header port_md_h {
    bit<32> f1;
    bit<32> f2;
}

/* Exactly 64 bits: the resubmit data of Tofino 1. */
header resub_h {
    bit<8> tag;
    bit<16> f;
    bit<16> out_port;
    bit<24> f2lo;
}

struct header_t {
    ethernet_h ethernet;
}

struct metadata_t {
    port_md_h port_md;
    resub_h resub;
}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        transition select(ig_intr_md.resubmit_flag) {
            0 : parse_port_metadata;
            1 : parse_resubmit;
        }
    }

    state parse_port_metadata {
        ig_md.port_md = port_metadata_unpack<port_md_h>(pkt);
        transition parse_ethernet;
    }

    state parse_resubmit {
        pkt.extract(ig_md.resub);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_intr_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_intr_tm_md) {

    Counter<bit<32>, bit<2>>(4, CounterType_t.PACKETS) passes;

    action resub(bit<16> f, bit<16> out_port) {
        ig_md.resub.setValid();
        ig_md.resub.tag = 0xa5;
        ig_md.resub.f = f;
        ig_md.resub.out_port = out_port;
        ig_md.resub.f2lo = ig_md.port_md.f2[23:0];
        ig_intr_dprsr_md.resubmit_type = RESUBMIT_A;
        // Lost: the second pass starts from the packet as it arrived.
        hdr.ethernet.dst_addr = 0xffffffffffff;
    }

    action forward(PortId_t port) {
        ig_intr_tm_md.ucast_egress_port = port;
    }

    table pass_one {
        key = {
            ig_intr_md.ingress_port : exact @name("port");
            ig_md.port_md.f1 : exact @name("f1");
        }
        actions = {
            resub;
            forward;
        }
        default_action = forward(9);
        size = 64;
    }

    apply {
        if (ig_intr_md.resubmit_flag == 0) {
            passes.count(0);
            pass_one.apply();
        } else {
            passes.count(1);
            hdr.ethernet.src_addr = ig_md.resub.tag ++ ig_md.resub.f ++ ig_md.resub.f2lo;
            ig_intr_tm_md.ucast_egress_port = (PortId_t)ig_md.resub.out_port;
        }
        ig_intr_tm_md.bypass_egress = 1w1;
    }
}

control SwitchIngressDeparser(packet_out pkt, inout header_t hdr, in metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md) {
    Resubmit(RESUBMIT_A) resubmit;

    apply {
        if (ig_intr_dprsr_md.resubmit_type == RESUBMIT_A) {
            resubmit.emit(ig_md.resub);
        }
        pkt.emit(hdr);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         EmptyEgressParser(),
         EmptyEgress(),
         EmptyEgressDeparser()) pipe;

Switch(pipe) main;
