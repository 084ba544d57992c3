/* The accepted twins of reject/tna_salu_inputs.p4 (bf-p4c 9.13.4 compiles this on both
 * targets, 2026-12-01): two PHV inputs read by four register actions of one Register, in
 * conditions and in updates (the shape of p4/tna/netlock.p4's lk_state); two slices of one
 * field, two inputs; and a register action that nothing executes, whose third input the
 * compiler does not count. */
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
    /* two inputs over four register actions, read in conditions and in updates */
    Register<pair_t, bit<10>>(1024) two;
    RegisterAction<pair_t, bit<10>, bit<1>>(two) take = {
        void apply(inout pair_t v, out bit<1> rv) {
            rv = 0;
            if (v.lo < 0x10000 && v.hi <= md.val) { v.lo = v.lo + md.idx; rv = 1; }
        }
    };
    RegisterAction<pair_t, bit<10>, bit<1>>(two) take_x = {
        void apply(inout pair_t v, out bit<1> rv) {
            rv = 0;
            if (v.lo == 0) {
                v.lo = v.lo + md.idx;
                rv = 1;
                if (md.val >= 0x80000000) { v.hi = v.hi + md.val; }
            } else {
                if (md.val < 0x80000000) { v.hi = v.hi + md.val; }
            }
        }
    };
    RegisterAction<pair_t, bit<10>, bit<32>>(two) rel = {
        void apply(inout pair_t v, out bit<32> rv) { v.lo = v.lo - md.idx; v.hi = v.hi - md.val; rv = v.lo; }
    };
    RegisterAction<pair_t, bit<10>, bit<32>>(two) hic = {
        void apply(inout pair_t v, out bit<32> rv) { rv = v.hi; if (md.idx != 0) { v.lo = 0; v.hi = 0; } }
    };
    /* two slices of one field: two inputs; and a register action that nothing executes, whose
     * third input the compiler does not count */
    Register<pair_t, bit<10>>(1024) halves;
    RegisterAction<pair_t, bit<10>, bit<32>>(halves) h_sub = {
        void apply(inout pair_t v, out bit<32> rv) {
            v.lo = v.lo - (bit<32>)md.val[31:16];
            v.hi = v.hi - (bit<32>)md.val[15:0];
            rv = v.hi;
        }
    };
    RegisterAction<pair_t, bit<10>, bit<32>>(halves) h_unused = {
        void apply(inout pair_t v, out bit<32> rv) { rv = v.lo; v.hi = md.idx; }
    };
    action a_take() { hdr.eth.dst[0:0] = take.execute(md.idx[9:0]); }
    action a_take_x() { hdr.eth.dst[0:0] = take_x.execute(md.idx[9:0]); }
    action a_rel() { hdr.eth.src[31:0] = rel.execute(md.idx[9:0]); }
    action a_hic() { hdr.eth.src[31:0] = hic.execute(md.idx[9:0]); }
    table t {
        key = { hdr.eth.etype : exact; }
        actions = { a_take; a_take_x; a_rel; a_hic; NoAction; }
        const default_action = NoAction();
        const entries = { 1 : a_take(); 2 : a_take_x(); 3 : a_rel(); 4 : a_hic(); }
        size = 16;
    }
    apply {
        md.idx = (bit<32>)hdr.eth.dst[47:32];
        md.val = hdr.eth.src[47:16];
        t.apply();
        hdr.eth.dst[47:16] = h_sub.execute(md.idx[9:0]);
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
