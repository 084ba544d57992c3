/* TNA P4Info (the standard form bf-p4c writes with --p4runtime-force-std-externs): tables,
 * actions, indexed and direct counters and meters, a pair register, an action profile with a
 * selector, a digest and the controller headers. */
#include <core.p4>
#include <tna.p4>

@controller_header("packet_in")
header packet_in_h {
    PortId_t ingress_port;
    bit<7> pad;
}

header ethernet_h {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct header_t {
    packet_in_h packet_in;
    ethernet_h ethernet;
}

struct metadata_t {
    bit<16> flow;
}

struct pair_t {
    bit<32> lo;
    bit<32> hi;
}

struct learn_t {
    bit<48> src;
    PortId_t port;
}

parser IgParser(packet_in pkt, out header_t hdr, out metadata_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Counter<bit<32>, PortId_t>(512, CounterType_t.PACKETS_AND_BYTES) cnt;
    DirectCounter<bit<32>>(CounterType_t.BYTES) dcnt;
    Meter<bit<16>>(1024, MeterType_t.BYTES) mtr;
    DirectMeter(MeterType_t.PACKETS) dmtr;
    Register<pair_t, bit<16>>(1024) flows;
    RegisterAction<pair_t, bit<16>, bit<32>>(flows) flow_update = {
        void apply(inout pair_t value, out bit<32> rv) {
            value.lo = value.lo + 1;
            rv = value.hi;
        }
    };
    Hash<bit<16>>(HashAlgorithm_t.CRC16) sel_hash;
    ActionProfile(256) ap;
    ActionSelector(ap, sel_hash, SelectorMode_t.FAIR, 8, 32) sel;

    action hit(PortId_t port) {
        dcnt.count();
        ig_tm_md.ucast_egress_port = port;
    }
    action set_flow(bit<16> flow) {
        md.flow = flow;
        ig_dprsr_md.drop_ctl = (bit<3>)dmtr.execute();
    }
    action learn() {
        ig_dprsr_md.digest_type = 1;
    }

    table forward {
        key = {
            hdr.ethernet.dst : exact;
        }
        actions = {
            hit;
            learn;
        }
        counters = dcnt;
        size = 256;
    }

    table flows_tbl {
        key = {
            hdr.ethernet.src : ternary;
        }
        actions = {
            set_flow;
        }
        meters = dmtr;
        size = 64;
    }

    table ecmp {
        key = {
            md.flow : exact;
            hdr.ethernet.src : selector;
        }
        actions = {
            hit;
        }
        implementation = sel;
        size = 128;
    }

    apply {
        cnt.count(ig_intr_md.ingress_port);
        forward.apply();
        flows_tbl.apply();
        mtr.execute(md.flow);
        flow_update.execute(md.flow);
        ecmp.apply();
    }
}

control IgDeparser(packet_out pkt, inout header_t hdr, in metadata_t md,
                   in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                   in ingress_intrinsic_metadata_t ig_intr_md) {
    Digest<learn_t>(1) learn_digest;
    apply {
        if (ig_dprsr_md.digest_type == 1) {
            learn_digest.pack({hdr.ethernet.src, ig_intr_md.ingress_port});
        }
        pkt.emit(hdr);
    }
}

parser EgParser(packet_in pkt, out header_t hdr, out metadata_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition accept;
    }
}

control Eg(inout header_t hdr, inout metadata_t md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout header_t hdr, in metadata_t md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), SwitchIngress(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
