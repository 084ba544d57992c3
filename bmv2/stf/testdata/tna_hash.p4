/* TNA hashing: Hash.get of the UDP five-tuple with the standard CRCs of HashAlgorithm_t
 * (CRC8, CRC16, CRC32, CRC64), a custom CRCPolynomial (CRC-16/CCITT-FALSE), IDENTITY, XOR16,
 * and a 32-bit CRC taken to 8 bits. The results follow the UDP header. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

header hash_h {
    bit<16> crc16;
    bit<32> crc32;
    bit<8> crc8;
    bit<16> ccitt;
    bit<32> ident;
    bit<16> xor16;
    bit<8> crc32lo8;
    bit<64> crc64;
}

struct header_t {
    ethernet_h ethernet;
    ipv4_h ipv4;
    udp_h udp;
    hash_h hash;
}

struct metadata_t {}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_IPV4 : parse_ipv4;
            default : reject;
        }
    }

    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            IP_PROTOCOLS_UDP : parse_udp;
            default : reject;
        }
    }

    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_intr_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_intr_tm_md) {

    CRCPolynomial<bit<16>>(16w0x1021, false, false, false, 16w0xffff, 16w0x0000) ccitt_poly;

    Hash<bit<16>>(HashAlgorithm_t.CRC16) h_crc16;
    Hash<bit<32>>(HashAlgorithm_t.CRC32) h_crc32;
    Hash<bit<8>>(HashAlgorithm_t.CRC8) h_crc8;
    Hash<bit<16>>(HashAlgorithm_t.CUSTOM, ccitt_poly) h_ccitt;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) h_ident;
    Hash<bit<16>>(HashAlgorithm_t.XOR16) h_xor16;
    Hash<bit<8>>(HashAlgorithm_t.CRC32) h_crc32lo8;
    Hash<bit<64>>(HashAlgorithm_t.CRC64) h_crc64;

    apply {
        hdr.hash.setValid();
        hdr.hash.crc16 = h_crc16.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                      hdr.udp.src_port, hdr.udp.dst_port});
        hdr.hash.crc32 = h_crc32.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                      hdr.udp.src_port, hdr.udp.dst_port});
        hdr.hash.crc8 = h_crc8.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                    hdr.udp.src_port, hdr.udp.dst_port});
        hdr.hash.ccitt = h_ccitt.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                      hdr.udp.src_port, hdr.udp.dst_port});
        hdr.hash.ident = h_ident.get({hdr.ipv4.src_addr});
        hdr.hash.xor16 = h_xor16.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr});
        hdr.hash.crc32lo8 = h_crc32lo8.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                            hdr.udp.src_port, hdr.udp.dst_port});
        hdr.hash.crc64 = h_crc64.get({hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                                      hdr.udp.src_port, hdr.udp.dst_port});
        ig_intr_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
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
