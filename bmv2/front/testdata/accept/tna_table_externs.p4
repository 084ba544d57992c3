/* The accepted twins of reject/tna_table_externs.p4 (bf-p4c 9.13.4 compiles this on both
 * targets, 2026-11-30): every action of split_use runs both registers (the other with a read
 * whose answer is dropped), and hash_default has no default action that hashes (an entry
 * matching every key runs it). both_answers runs two register actions in one action and
 * writes the answer of one (two answers: reject/tna_two_answers.p4). */
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
    Register<bit<32>, bit<8>>(16) r0;
    Register<bit<32>, bit<8>>(16) r1;
    Register<bit<32>, bit<8>>(16) r2;
    Register<bit<32>, bit<8>>(16) r3;
    RegisterAction<bit<32>, bit<8>, bit<32>>(r0) rd0 = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(r1) rd1 = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(r2) rd2 = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    RegisterAction<bit<32>, bit<8>, bit<32>>(r3) rd3 = { void apply(inout bit<32> v, out bit<32> rv) { rv = v; } };
    Hash<bit<8>>(HashAlgorithm_t.IDENTITY) h;
    action only0() { md.val = rd0.execute(0); rd1.execute(0); }
    action only1() { rd0.execute(0); md.val = rd1.execute(0); }
    table split_use {
        key = { md.idx : exact; }
        actions = { only0; only1; }
        size = 16;
    }
    action both() {
        hdr.eth.src[31:0] = rd2.execute(md.idx[7:0]);
        rd3.execute(md.idx[7:0]);
    }
    table both_answers {
        key = { md.idx : exact; }
        actions = { both; }
        size = 16;
    }
    action hashed() { hdr.eth.etype[7:0] = h.get({md.idx}); }
    table hash_default {
        key = { md.idx : ternary; }
        actions = { hashed; NoAction; }
        const default_action = NoAction();
        const entries = { _ : hashed(); }
        size = 16;
    }
    apply {
        split_use.apply();
        both_answers.apply();
        hash_default.apply();
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
