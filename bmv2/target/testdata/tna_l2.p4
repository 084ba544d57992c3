/* An L2 switch in TNA for the engine-backed target: MAC learning by digest, a per-port
 * ingress counter, a register and a pair register, a per-port egress counter, and the
 * controller's packet-in and packet-out headers (CPU port 255). */
#include <core.p4>
#include <tna.p4>

const PortId_t CPU_PORT = 255;

@controller_header("packet_in")
header packet_in_h {
    PortId_t ingress_port;
    bit<7> pad;
}

@controller_header("packet_out")
header packet_out_h {
    PortId_t egress_port;
    bit<7> pad;
}

header ethernet_h {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct header_t {
    packet_in_h packet_in;
    packet_out_h packet_out;
    ethernet_h ethernet;
}

struct metadata_t {}

struct pair_t {
    bit<32> frames;
    bit<32> last_len;
}

struct learn_t {
    bit<48> src;
    PortId_t port;
}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_intr_md.ingress_port) {
            CPU_PORT : parse_packet_out;
            default : parse_ethernet;
        }
    }

    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {

    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) rx_port;
    Register<bit<32>, PortId_t>(512, 0) rx_frames;
    RegisterAction<bit<32>, PortId_t, bit<32>>(rx_frames) count_frame = {
        void apply(inout bit<32> value) {
            value = value + 1;
        }
    };

    /* frames seen and the length field of the last frame, per port: a pair of 32-bit cells */
    Register<pair_t, PortId_t>(512) port_pairs;
    RegisterAction<pair_t, PortId_t, bit<32>>(port_pairs) pair_update = {
        void apply(inout pair_t value) {
            value.frames = value.frames + 1;
            value.last_len = (bit<32>)hdr.ethernet.ether_type;
        }
    };

    action learn() {
        ig_dprsr_md.digest_type = 1;
    }

    table smac {
        key = {
            hdr.ethernet.src : exact;
        }
        actions = {
            NoAction;
            learn;
        }
        const default_action = learn;
        size = 1024;
    }

    action forward(PortId_t port) {
        ig_tm_md.ucast_egress_port = port;
    }

    action to_cpu() {
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = ig_intr_md.ingress_port;
        ig_tm_md.ucast_egress_port = CPU_PORT;
        ig_tm_md.bypass_egress = 1;
    }

    action drop() {
        ig_dprsr_md.drop_ctl = 1;
    }

    table dmac {
        key = {
            hdr.ethernet.dst : exact;
        }
        actions = {
            forward;
            to_cpu;
            drop;
        }
        const default_action = drop;
        size = 1024;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            ig_tm_md.ucast_egress_port = hdr.packet_out.egress_port;
            ig_tm_md.bypass_egress = 1;
            hdr.packet_out.setInvalid();
        } else {
            rx_port.count(ig_intr_md.ingress_port);
            count_frame.execute(ig_intr_md.ingress_port);
            pair_update.execute(ig_intr_md.ingress_port);
            smac.apply();
            dmac.apply();
        }
    }
}

control SwitchIngressDeparser(packet_out pkt, inout header_t hdr, in metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                              in ingress_intrinsic_metadata_t ig_intr_md) {
    Digest<learn_t>(1) learn;

    apply {
        if (ig_dprsr_md.digest_type == 1) {
            learn.pack({hdr.ethernet.src, ig_intr_md.ingress_port});
        }
        pkt.emit(hdr);
    }
}

struct eg_header_t {
    ethernet_h ethernet;
}

parser SwitchEgressParser(packet_in pkt, out eg_header_t hdr, out metadata_t eg_md,
                          out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchEgress(inout eg_header_t hdr, inout metadata_t eg_md,
                     in egress_intrinsic_metadata_t eg_intr_md) {
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS) tx_port;

    apply {
        tx_port.count(eg_intr_md.egress_port);
    }
}

control SwitchEgressDeparser(packet_out pkt, inout eg_header_t hdr, in metadata_t eg_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         SwitchEgressParser(),
         SwitchEgress(),
         SwitchEgressDeparser()) pipe;

Switch(pipe) main;
