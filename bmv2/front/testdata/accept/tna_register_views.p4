/* What bf-p4c (p4c 34b86e9, backends/tofino) accepts of the rules in
 * reject/tna_register_limits.p4: four register actions on a register, register actions whose
 * index type differs from the register's, a view of the cells that covers the same memory,
 * and casts the compiler simplifies (narrowing, or widening what was widened). */
#include <core.p4>
#include <tna.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
struct hdr_t { eth_t eth; }
struct md_t {
    bit<32> idx;
    bit<32> val;
    bit<16> half;
    bit<8>  small;
}
struct pair_t {
    bit<32> lo;
    bit<32> hi;
}

parser IgParser(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        transition accept;
    }
}

control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<32>>(1024) four;
    RegisterAction<bit<32>, bit<32>, bit<32>>(four) f1 = { void apply(inout bit<32> v) { v = 1; } };
    RegisterAction<bit<32>, bit<32>, bit<32>>(four) f2 = { void apply(inout bit<32> v) { v = 2; } };
    RegisterAction<bit<32>, bit<16>, bit<32>>(four) f3 = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    action w1() { four.write(md.idx, 7); }
    Register<pair_t, bit<32>>(1024) pairs;
    RegisterAction<pair_t, bit<32>, bit<32>>(pairs) p1 = {
        void apply(inout pair_t v, out bit<32> rv) { rv = v.hi; v.lo = v.lo + 1; }
    };
    /* 16-bit cells with one more index bit: the same memory as 32-bit cells */
    Register<bit<32>, bit<10>>(1024) words;
    RegisterAction<bit<16>, bit<11>, bit<16>>(words) halves = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };
    table t {
        key = { md.idx: exact; }
        actions = { w1; NoAction; }
        size = 16;
    }
    apply {
        if (md.idx == 0) {
            f1.execute(md.idx);
        } else {
            t.apply();
        }
        md.val = p1.execute(md.idx);
        md.half = halves.execute(3);
        /* casts the compiler simplifies */
        md.small = (bit<8>)(bit<16>)md.val;
        md.val = (bit<32>)(bit<16>)md.small;
        md.val = (bit<32>)((bit<16>)md.half & 0x7fff);
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}

control IgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
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
    apply { }
}

control EgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}

Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
