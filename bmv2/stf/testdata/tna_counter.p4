/* TNA counters: an indexed Counter per ingress port (packets and bytes), a byte Counter per
 * IP protocol that leaves the Ethernet header out (adjust_byte_count), and a DirectCounter on
 * the forwarding table. Egress is bypassed. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

struct header_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
}

struct metadata_t {}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : accept;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_intr_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_intr_tm_md) {

    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) port_counter;
    Counter<bit<64>, bit<8>>(256, CounterType_t.BYTES) proto_bytes;
    DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES) direct_counter;

    action hit(PortId_t port) {
        direct_counter.count();
        ig_intr_tm_md.ucast_egress_port = port;
    }

    action miss() {
        direct_counter.count();
        ig_intr_dprsr_md.drop_ctl = 0x1;
    }

    table forward {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            hit;
            miss;
        }
        const default_action = miss;
        size = 1024;
        counters = direct_counter;
    }

    apply {
        port_counter.count(ig_intr_md.ingress_port);
        if (hdr.ipv4.isValid()) {
            // Count the IP packet without its 14-byte Ethernet header.
            proto_bytes.count(hdr.ipv4.protocol, 14);
        }
        forward.apply();
        ig_intr_tm_md.bypass_egress = 1w1;
    }
}

control SwitchIngressDeparser(packet_out pkt, inout header_t hdr, in metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md) {
    apply {
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
