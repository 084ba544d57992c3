/* TNA digests: MAC learning. A source address the smac table does not know is sent to the
 * control plane with its port (digest type A); a known one that moved is sent with the old
 * and new port (type B). Digests are packed by the ingress deparser. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

const DigestType_t DIGEST_TYPE_A = 1;
const DigestType_t DIGEST_TYPE_B = 2;

struct digest_a_t {
    mac_addr_t dst_addr;
    PortId_t port;
    mac_addr_t src_addr;
}

struct digest_b_t {
    mac_addr_t src_addr;
    PortId_t old_port;
    PortId_t new_port;
}

struct header_t {
    ethernet_h ethernet;
}

struct metadata_t {
    PortId_t port;
}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_intr_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_intr_tm_md) {

    action smac_hit(PortId_t port) {
        ig_md.port = port;
    }

    action smac_miss() {
        ig_intr_dprsr_md.digest_type = DIGEST_TYPE_A;
    }

    table smac {
        key = {
            hdr.ethernet.src_addr : exact;
        }
        actions = {
            smac_hit;
            smac_miss;
        }
        const default_action = smac_miss;
        size = 1024;
    }

    action dmac_forward(PortId_t port) {
        ig_intr_tm_md.ucast_egress_port = port;
    }

    action dmac_flood() {
        ig_intr_tm_md.mcast_grp_a = 1;
    }

    table dmac {
        key = {
            hdr.ethernet.dst_addr : exact;
        }
        actions = {
            dmac_forward;
            dmac_flood;
        }
        const default_action = dmac_flood;
        size = 1024;
    }

    apply {
        switch (smac.apply().action_run) {
            smac_hit: {
                if (ig_md.port != ig_intr_md.ingress_port) {
                    ig_intr_dprsr_md.digest_type = DIGEST_TYPE_B;
                }
            }
        }
        dmac.apply();
        ig_intr_tm_md.bypass_egress = 1w1;
    }
}

control SwitchIngressDeparser(packet_out pkt, inout header_t hdr, in metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                              in ingress_intrinsic_metadata_t ig_intr_md) {
    Digest<digest_a_t>(DIGEST_TYPE_A) digest_a;
    Digest<digest_b_t>(DIGEST_TYPE_B) digest_b;

    apply {
        if (ig_intr_dprsr_md.digest_type == DIGEST_TYPE_A) {
            digest_a.pack({hdr.ethernet.dst_addr, ig_intr_md.ingress_port, hdr.ethernet.src_addr});
        } else if (ig_intr_dprsr_md.digest_type == DIGEST_TYPE_B) {
            digest_b.pack({hdr.ethernet.src_addr, ig_md.port, ig_intr_md.ingress_port});
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
