/* bf-p4c's rules on parsers and deparsers (p4c 34b86e9, backends/tofino): each is refused here
 * as the Tofino 1 compiler refuses it; accepted twins are in TestTNAParseDepth and
 * TestTNAFieldListConstants (tna_rules_test.go). */
#include <core.p4>
#include <tna.p4>
header eth_t { bit<48> dst; bit<48> src; bit<16> etype; }
header kind_t { bit<8> kind; }
header blob100_t { bit<800> f; }
header blob10_t { bit<80> f; }
struct hdr_t {
    eth_t eth;
    blob100_t blob;
    blob10_t[2] tail;
}
struct md_t { bit<32> idx; }
const bit<8> K_MIRROR = 0xa3;
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
    apply {
        ig_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        ig_dprsr_md.mirror_type = 1;
    }
}
control IgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Mirror() mirror;
    apply {
        /* a constant in a mirror field list: deparsed fields are packet or metadata fields, or 0 */
        if (ig_dprsr_md.mirror_type == 1) {
            mirror.emit<kind_t>((MirrorId_t)md.idx, {K_MIRROR});
        }
        pkt.emit(hdr);
    }
}
/* the mirrored copy's path: 27 + 1 + 100 + 14 + 2 x 10 = 162 bytes, more than Tofino 1's 160 */
parser EgParser(packet_in pkt, out hdr_t hdr, out md_t md, out egress_intrinsic_metadata_t eg_intr_md) {
    state start {
        pkt.extract(eg_intr_md);
        transition select(pkt.lookahead<bit<8>>()) {
            0xa3: parse_mirror;
            default: parse_eth;
        }
    }
    state parse_mirror {
        kind_t k;
        pkt.extract(k);
        pkt.extract(hdr.blob);
        transition parse_eth;
    }
    state parse_eth {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            0x88b5: parse_tail;
            default: accept;
        }
    }
    /* a loop into a stack of two: counted twice */
    state parse_tail {
        pkt.extract(hdr.tail.next);
        transition select(hdr.tail.last.f[7:0]) {
            1: parse_tail;
            default: accept;
        }
    }
}
control Eg(inout hdr_t hdr, inout md_t md, in egress_intrinsic_metadata_t eg_intr_md) {
    apply { }
}
control EgDeparser(packet_out pkt, inout hdr_t hdr, in md_t md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IgParser(), Ing(), IgDeparser(), EgParser(), Eg(), EgDeparser()) pipe;
Switch(pipe) main;
