/* TNA meters: a packet meter returning MeterColor_t, one with its own colour values, a byte
 * meter that leaves 20 bytes of each packet out (adjust_byte_count), a colour-aware meter,
 * and a DirectMeter on a table. The colours are written into the packet. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

const bit<16> ETHERTYPE_METER = 16w0x88b6;

header meter_h {
    bit<8> idx;
    bit<8> color_in;
    bit<8> color;
    bit<8> color_custom;
    bit<8> color_bytes;
    bit<8> color_aware;
    bit<8> color_direct;
}

struct header_t {
    ethernet_h ethernet;
    meter_h m;
}

struct metadata_t {}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_METER : parse_meter;
            default : accept;
        }
    }

    state parse_meter {
        pkt.extract(hdr.m);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_intr_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_intr_tm_md) {

    Meter<bit<8>>(8, MeterType_t.PACKETS) m_pkt;
    Meter<bit<8>>(8, MeterType_t.PACKETS, 8w30, 8w20, 8w10) m_custom;
    Meter<bit<8>>(8, MeterType_t.BYTES) m_bytes;
    Meter<bit<8>>(8, MeterType_t.PACKETS) m_aware;
    DirectMeter(MeterType_t.PACKETS) dm;

    action set_direct_color() {
        hdr.m.color_direct = dm.execute();
    }

    table direct_tbl {
        key = {
            hdr.ethernet.src_addr : exact;
        }
        actions = {
            set_direct_color;
            NoAction;
        }
        meters = dm;
        size = 16;
    }

    apply {
        if (hdr.m.isValid()) {
            hdr.m.color = m_pkt.execute(hdr.m.idx);
            hdr.m.color_custom = m_custom.execute(hdr.m.idx);
            hdr.m.color_bytes = m_bytes.execute(hdr.m.idx, 20);
            if (hdr.m.color_in == 1) {
                hdr.m.color_aware = m_aware.execute(hdr.m.idx, MeterColor_t.YELLOW);
            } else {
                hdr.m.color_aware = m_aware.execute(hdr.m.idx, MeterColor_t.GREEN);
            }
            direct_tbl.apply();
        }
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
