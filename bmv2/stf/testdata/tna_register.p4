/* TNA registers: RegisterActions on 32-bit cells, on a pair of 32-bit fields and on 8-bit
 * cells with an initial value; two register actions of one register in exclusive branches;
 * a register action that reads a header field; a register action run from a table's action;
 * a DirectRegister with one cell per table entry.
 * The packet carries the operation and gets the results back on the port it came from. */
#include <core.p4>
#include <tna.p4>

#include "tna_common.inc"

const bit<16> ETHERTYPE_REG = 16w0x88b5;

header reg_h {
    bit<8> op;
    bit<32> idx;
    bit<32> val;
    bit<32> rv;
    bit<8> rv8;
}

struct header_t {
    ethernet_h ethernet;
    reg_h reg;
}

struct metadata_t {}

struct pair {
    bit<32> first;
    bit<32> second;
}

parser SwitchIngressParser(packet_in pkt, out header_t hdr, out metadata_t ig_md,
                           out ingress_intrinsic_metadata_t ig_intr_md) {
    TofinoIngressParser() tofino_parser;

    state start {
        tofino_parser.apply(pkt, ig_intr_md);
        transition parse_ethernet;
    }

    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETHERTYPE_REG : parse_reg;
            default : accept;
        }
    }

    state parse_reg {
        pkt.extract(hdr.reg);
        transition accept;
    }
}

control SwitchIngress(inout header_t hdr, inout metadata_t ig_md,
                      in ingress_intrinsic_metadata_t ig_intr_md,
                      in ingress_intrinsic_metadata_from_parser_t ig_intr_prsr_md,
                      inout ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md,
                      inout ingress_intrinsic_metadata_for_tm_t ig_intr_tm_md) {

    Register<bit<32>, bit<32>>(1024, 0) counters;
    // Returns the old value and increments the cell.
    RegisterAction<bit<32>, bit<32>, bit<32>>(counters) inc = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = value;
            value = value + 1;
        }
    };
    // Decrements the cell down to 0 and returns the new value.
    RegisterAction<bit<32>, bit<32>, bit<32>>(counters) dec = {
        void apply(inout bit<32> value, out bit<32> rv) {
            if (value > 0) {
                value = value - 1;
            }
            rv = value;
        }
    };

    Register<pair, bit<32>>(32w1024) pairs;
    // Increments the first half, adds the packet's val to the second, returns the old second.
    RegisterAction<pair, bit<32>, bit<32>>(pairs) pair_update = {
        void apply(inout pair value, out bit<32> read_value) {
            read_value = value.second;
            value.first = value.first + 1;
            value.second = value.second + hdr.reg.val;
        }
    };

    Register<bit<8>, bit<32>>(8, 8w5) tokens;
    // Takes a token while there are some; returns what is left.
    RegisterAction<bit<8>, bit<32>, bit<8>>(tokens) take = {
        void apply(inout bit<8> value, out bit<8> rv) {
            if (value != 0) {
                value = value - 1;
            }
            rv = value;
        }
    };

    Register<bit<32>, bit<32>>(16) maxima;
    // Keeps the largest val seen; returns 1 when val is a new maximum.
    RegisterAction<bit<32>, bit<32>, bit<32>>(maxima) track_max = {
        void apply(inout bit<32> value, out bit<32> rv) {
            rv = 0;
            if (hdr.reg.val > value) {
                value = hdr.reg.val;
                rv = 1;
            }
        }
    };

    // One cell per entry of by_src, counting its hits from 10.
    DirectRegister<bit<32>>(32w10) per_entry;
    DirectRegisterAction<bit<32>, bit<32>>(per_entry) entry_hits = {
        void apply(inout bit<32> value, out bit<32> rv) {
            value = value + 1;
            rv = value;
        }
    };

    action count_entry() {
        hdr.reg.rv = entry_hits.execute();
    }

    table by_src {
        key = {
            hdr.ethernet.src_addr : exact;
        }
        actions = {
            count_entry;
            NoAction;
        }
        registers = per_entry;
        size = 16;
    }

    action count_in_table(bit<32> idx) {
        hdr.reg.rv = inc.execute(idx);
    }

    table by_val {
        key = {
            hdr.reg.val : exact;
        }
        actions = {
            count_in_table;
            NoAction;
        }
        size = 16;
    }

    apply {
        if (hdr.reg.isValid()) {
            if (hdr.reg.op == 1) {
                hdr.reg.rv = inc.execute(hdr.reg.idx);
            } else if (hdr.reg.op == 2) {
                hdr.reg.rv = dec.execute(hdr.reg.idx);
            } else if (hdr.reg.op == 3) {
                hdr.reg.rv = pair_update.execute(hdr.reg.idx);
            } else if (hdr.reg.op == 4) {
                hdr.reg.rv8 = take.execute(hdr.reg.idx);
            } else if (hdr.reg.op == 5) {
                hdr.reg.rv = track_max.execute(0);
            } else if (hdr.reg.op == 6) {
                by_val.apply();
            } else if (hdr.reg.op == 7) {
                by_src.apply();
            }
        }
        ig_intr_tm_md.ucast_egress_port = ig_intr_md.ingress_port;
        ig_intr_tm_md.bypass_egress = 1w1;
    }
}

control SwitchIngressDeparser(packet_out pkt, inout header_t hdr, in metadata_t ig_md,
                              in ingress_intrinsic_metadata_for_deparser_t ig_intr_dprsr_md) {
    apply {
        pkt.emit(hdr);
    }
}

Pipeline(SwitchIngressParser(),
         SwitchIngress(),
         SwitchIngressDeparser(),
         EmptyEgressParser(),
         EmptyEgress(),
         EmptyEgressDeparser()) pipe;

Switch(pipe) main;
