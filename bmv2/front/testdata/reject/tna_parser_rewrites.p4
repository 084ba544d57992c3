/* bf-p4c's rule on fields a parser writes twice on a path (p4c 34b86e9,
 * parde/check_parser_multi_write.cpp), on Tofino 1: meta.csum_ok set in start and assigned a
 * checksum verify on every path on, as p4/tna/netlock.p4 had it, and an OR next to an
 * overwrite; accepted twins are in TestTNAParserRewrites (tna_rules_test.go). */
#include <core.p4>
#include <tna.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header h_t { bit<16> f; bit<16> g; }
struct hdr_t { eth_t eth; h_t h; h_t h2; }
struct md_t { bit<16> val; bool ok; bit<1> err; bit<16> idx; }
parser IgParser(packet_in pkt, out hdr_t hdr, out md_t md, out ingress_intrinsic_metadata_t ig_intr_md) {
    Checksum() ck;
    state start {
        pkt.extract(ig_intr_md);
        pkt.advance(PORT_METADATA_SIZE);
        pkt.extract(hdr.eth);
        md.ok = true; md.err = 1;
        transition select(hdr.eth.etype) { 0x800: next; 0x801: other; default: accept; }
    }
    state next {
        pkt.extract(hdr.h);
        ck.add(hdr.h);
        md.ok = ck.verify(); md.err = md.err | (bit<1>)ck.verify();
        transition accept;
    }
    state other {
        pkt.extract(hdr.h2);
        md.ok = ck.verify(); md.err = 0;
        transition accept;
    }
}
control Ing(inout hdr_t hdr, inout md_t md, in ingress_intrinsic_metadata_t ig_intr_md,
            in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
            inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
    apply {
        if (md.ok) { hdr.eth.etype = md.val; }
        if (md.err == 1) { hdr.eth.src = 1; }
        hdr.eth.dst = (bit<48>)md.idx;
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
    }
}
control IgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgParser(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); pkt.extract(hdr.eth); transition accept; }
}
control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md) { apply { } }
control EgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md) { apply { pkt.emit(hdr); } }
Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
