// pipes.p4: a TNA program for Config.Pipes (pipes_test.go). Every packet carries a pipe_h
// header; the pipes write into it what their state held, so a test sees which pipe's copy
// each pass used.
#include <core.p4>
#include <tna.p4>

const bit<8> OP_FWD = 1;   // forward to pipe_h.dest
const bit<8> OP_RESUB = 2; // resubmit once, then forward to pipe_h.dest
const bit<8> OP_MIRROR = 3; // forward to pipe_h.dest, and mirror (session 5) as received

header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header pipe_h {
    bit<8>  op;
    bit<16> dest; // the port ingress sends the packet to (68: recirculate, then out of port 2)
    bit<32> ig;   // ig_count[0] before the first ingress pass of the packet
    bit<32> ig2;  // ig_count[0] before its second ingress pass (resubmitted or recirculated)
    bit<32> eg;   // eg_count[0] before its (last) egress pass
    bit<32> tag;  // set by table tag_t
    bit<8>  color;  // ig_meter[0]'s colour for the packet's first ingress pass
    bit<8>  dcolor; // tag_meter's colour (tag_t's entry's direct meter)
}
struct hdr_t { eth_t eth; pipe_h p; }
struct md_t { }

parser IgP(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE); // port metadata, or the resubmit data
        pkt.extract(hdr.eth);
        pkt.extract(hdr.p);
        transition accept;
    }
}

control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<32>>(4) ig_count;
    RegisterAction<bit<32>, bit<32>, bit<32>>(ig_count) ig_inc = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; value = value + 1; }
    };
    Counter<bit<32>, bit<2>>(4, CounterType_t.PACKETS_AND_BYTES) ig_pkts;
    Meter<bit<2>>(4, MeterType_t.PACKETS) ig_meter;
    DirectCounter<bit<32>>(CounterType_t.PACKETS_AND_BYTES) tag_ctr;
    DirectMeter(MeterType_t.PACKETS) tag_meter;
    action set_tag(bit<32> v) { hdr.p.tag = v; tag_ctr.count(); hdr.p.dcolor = tag_meter.execute(); }
    table tag_t {
        key = { hdr.p.op : exact; }
        actions = { set_tag; @defaultonly NoAction; }
        counters = tag_ctr;
        meters = tag_meter;
        default_action = NoAction();
    }
    apply {
        bit<32> n = ig_inc.execute(0);
        ig_pkts.count(0);
        if (ig_intr_md.ingress_port == 68) {
            hdr.p.ig2 = n;
            ig_tm_md.ucast_egress_port = 2;
        } else if (ig_intr_md.resubmit_flag == 1) {
            hdr.p.ig2 = n;
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.p.dest;
        } else {
            hdr.p.ig = n;
            hdr.p.color = ig_meter.execute(0);
            ig_tm_md.ucast_egress_port = (PortId_t)hdr.p.dest;
            if (hdr.p.op == OP_RESUB) {
                ig_dprsr_md.resubmit_type = 1;
            }
            if (hdr.p.op == OP_MIRROR) {
                ig_dprsr_md.mirror_type = 1;
            }
        }
        tag_t.apply();
    }
}

control IgD(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Resubmit() resub;
    Mirror() mir;
    apply {
        if (ig_dprsr_md.resubmit_type == 1) {
            resub.emit();
        }
        if (ig_dprsr_md.mirror_type == 1) {
            mir.emit((MirrorId_t)5);
        }
        pkt.emit(hdr);
    }
}

parser EgP(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        pkt.extract(hdr.eth);
        pkt.extract(hdr.p);
        transition accept;
    }
}

control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md,
           in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
           inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
           inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    Register<bit<32>, bit<32>>(4) eg_count;
    RegisterAction<bit<32>, bit<32>, bit<32>>(eg_count) eg_inc = {
        void apply(inout bit<32> value, out bit<32> rv) { rv = value; value = value + 1; }
    };
    apply {
        hdr.p.eg = eg_inc.execute(0);
    }
}

control EgD(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pipe;
Switch(pipe) main;
