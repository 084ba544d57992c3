/* A Tofino 2 (t2na.p4) program: Tofino 2's wider intrinsic metadata, a RegisterAction with
 * several outputs and its @optional overflow left out, RegisterAction2, the ghost thread as a
 * Pipeline argument, the parser counter's stack, and Pktgen. The P4Info's arch is t2na. */
#include <core.p4>
#include <t2na.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header gen_t {
    bit<32> seq;
}
struct hdr_t {
    eth_t eth;
}
struct md_t {
    bit<32> a;
    bit<16> b;
    QueueId_t q;
}

parser IgParser(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    ParserCounter() pc;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pc.push(8w4);
        pkt.extract(hdr.eth);
        pc.pop();
        transition accept;
    }
}

control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md,
            in ghost_intrinsic_metadata_t gh_intr_md) {
    Register<bit<32>, bit<32>>(1024) r;
    RegisterAction<bit<32>, bit<32>, bit<32>>(r) fifo = {
        void apply(inout bit<32> v, out bit<32> rv1, out bit<32> rv2) {
            rv1 = v;
            rv2 = v + 1;
            v = v + 1;
        }
    };
    Register<bit<16>, bit<32>>(1024) r16;
    RegisterAction2<bit<16>, bit<32>, bit<16>, bit<1>>(r16) two = {
        void apply(inout bit<16> v, out bit<16> rv1, out bit<1> rv2) {
            rv1 = v;
            rv2 = 1;
        }
    };
    apply {
        bit<32> second;
        md.a = fifo.execute(hdr.eth.src[31:0], second);
        bit<1> flag;
        md.b = two.execute(hdr.eth.dst[31:0], flag);
        md.q = ig_tm_md.qid;
        ig_dprsr_md.mirror_io_select = 1;
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}

control Ghost(in ghost_intrinsic_metadata_t gh_intr_md) {
    Register<bit<32>, bit<11>>(2048) qlen;
    RegisterAction<bit<32>, bit<11>, bit<32>>(qlen) update = {
        void apply(inout bit<32> v) {
            v = (bit<32>)gh_intr_md.qlength;
        }
    };
    apply {
        update.execute(gh_intr_md.qid);
    }
}

control IgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Pktgen() pgen;
    apply {
        if (ig_dprsr_md.pktgen == 1) {
            pgen.emit((gen_t){seq = md.a});
        }
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
    apply {
        md.a = eg_intr_md.enq_tstamp;
    }
}

control EgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser(), Ghost()) pipe;
Switch(pipe) main;
