/* bf-p4c's table properties (arch/tna.cpp, ValidateTableProperties): idle_timeout,
 * requires_versioning, the ALPM and ATCAM tuning properties; a property the compiler does not
 * know is a warning there (ignored), and a warning here. */
#include <core.p4>
#include <tna.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
struct hdr_t { eth_t eth; }
struct md_t { }

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
    action fwd(PortId_t port) { ig_tm_md.ucast_egress_port = port; }
    table dmac {
        key = { hdr.eth.dst: exact; }
        actions = { fwd; NoAction; }
        idle_timeout = true;
        requires_versioning = false;
        size = 1024;
    }
    table route {
        key = { hdr.eth.src: lpm; }
        actions = { fwd; NoAction; }
        as_alpm = true;
        number_partitions = 1024;
        subtrees_per_partition = 2;
        shift_granularity = 1;
        atcam_subset_width = 12;
        some_vendor_hint = 3;
        size = 4096;
    }
    apply {
        dmac.apply();
        route.apply();
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
