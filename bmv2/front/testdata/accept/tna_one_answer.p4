/* The accepted twins of reject/tna_two_answers.p4 (bf-p4c 9.13.4 compiles this on both
 * targets, 2026-12-01): an action that writes the answer of one register action and runs
 * another without one, and an action that runs two without answers. */
/* Shared scaffolding for the TNA reject corpus: each test declares control Ing and the
 * Pipeline/Switch instances, or uses tna_main.inc for them. */
#include <core.p4>
#include <tna.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}

struct hdr_t {
    eth_t eth;
}

struct md_t {
    bit<32> idx;
    bit<32> val;
    bit<64> wide;
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

control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}

control EgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md) {
    apply { pkt.emit(hdr); }
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    Register<bit<32>, bit<10>>(1024) ra;
    Register<bit<32>, bit<10>>(1024) rb;
    RegisterAction<bit<32>, bit<10>, bit<32>>(ra) ra_rd = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<10>, bit<32>>(ra) ra_wr = { void apply(inout bit<32> v) { v = md.val; } };
    RegisterAction<bit<32>, bit<10>, bit<32>>(rb) rb_rd = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<10>, bit<32>>(rb) rb_wr = { void apply(inout bit<32> v) { v = md.val; } };
    /* one answer beside a register action without one (each action runs the same register
     * action of each register, by order: the two registers share the table's meter address,
     * which selects it; bf-p4c refuses "ra_rd with rb_wr" beside "ra_wr with rb_wr":
     * "Both Register ... require the meter address hardware") */
    action one() {
        hdr.eth.dst[31:0] = ra_rd.execute(md.idx[9:0]);
        rb_rd.execute(md.idx[9:0]);
    }
    /* two register actions without answers */
    action none() {
        ra_wr.execute(md.idx[9:0]);
        rb_wr.execute(md.idx[9:0]);
    }
    table t {
        key = { hdr.eth.etype : exact; }
        actions = { one; none; NoAction; }
        const default_action = NoAction();
        size = 16;
    }
    apply {
        md.idx = (bit<32>)hdr.eth.dst[47:32];
        md.val = (bit<32>)hdr.eth.src[47:16];
        t.apply();
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
