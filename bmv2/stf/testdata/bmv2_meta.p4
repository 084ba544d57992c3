// What bmv2's simple_switch does with standard and user metadata where p4c's STF corpus is
// silent: across resubmit, recirculation and clones, for a dropped multicast, an unset egress
// port, a packet_length ingress wrote, and timestamps. bmv2_meta.stf holds what
// simple_switch.cpp (behavioral-model 9674187) does with it, field by field; the engine must
// agree (TestSuite), and so must real simple_switch running it compiled by p4c-bm2-ss
// (TestRealSTF).
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  pass;    // ingress passes (meta.passes, kept by field list 1)
    bit<8>  a;       // meta.a as ingress saw it (field lists 1 and 2)
    bit<8>  b;       // meta.b as ingress saw it (no field list)
    bit<16> pport;   // ingress_port as the parser saw it
    bit<16> iport;   // ingress_port as ingress saw it
    bit<8>  iinst;   // instance_type in ingress
    bit<8>  flags;   // 1: ingress ts == 0; 2: egress ts >= the first pass's ingress ts;
                     // 4: egress ts != 0; 8: parser_error != 0 in egress
    bit<8>  einst;   // instance_type in egress
    bit<16> espec;   // egress_spec as egress starts
    bit<16> eport;   // egress_port
    bit<16> plen;    // packet_length in egress
    bit<16> eiport;  // ingress_port as egress saw it
    bit<8>  ea;      // meta.a as egress saw it
    bit<8>  eb;      // meta.b as egress saw it
    bit<16> epport;  // meta.pport (the parser's ingress_port) as egress saw it
    bit<16> erid;    // egress_rid
}

struct headers_t { h_t h; }

struct meta_t {
    @field_list(1, 2) bit<8> a;
    bit<8> b;
    @field_list(1) bit<8> passes;
    bit<16> pport;
    @field_list(1, 2) bit<48> its;  // the first pass's ingress_global_timestamp
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        meta.pport = (bit<16>)sm.ingress_port;
        pkt.extract(hdr.h);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        meta.passes = meta.passes + 1;
        hdr.h.pass = meta.passes;
        hdr.h.a = meta.a;
        hdr.h.b = meta.b;
        hdr.h.pport = meta.pport;
        hdr.h.iport = (bit<16>)sm.ingress_port;
        hdr.h.iinst = (bit<8>)sm.instance_type;
        if (sm.ingress_global_timestamp == 0) {
            hdr.h.flags = 1;
        }
        if (meta.passes == 1) {
            meta.its = sm.ingress_global_timestamp;
        }
        meta.a = 0x5a;
        meta.b = 0xb5;
        if (hdr.h.op == 1) {
            // resubmit once with field list 1, then out of port 2
            if (meta.passes == 1) {
                resubmit_preserving_field_list(1);
            } else {
                sm.egress_spec = 2;
            }
        } else if (hdr.h.op == 2) {
            sm.egress_spec = 2;   // recirculated once in egress
        } else if (hdr.h.op == 3) {
            sm.egress_spec = 2;
            clone_preserving_field_list(CloneType.I2E, 5, 2);   // session 5: port 3
        } else if (hdr.h.op == 4) {
            sm.egress_spec = 2;   // cloned E2E in egress
        } else if (hdr.h.op == 5) {
            mark_to_drop(sm);
            sm.mcast_grp = 7;     // group 7: ports 4 (rid 1) and 5 (rid 2)
        } else if (hdr.h.op == 6) {
            // egress_spec never set: port 0
        } else if (hdr.h.op == 7) {
            sm.egress_spec = 2;
            sm.packet_length = 7;
        } else if (hdr.h.op == 8) {
            // resubmit with a field list no field is in: everything reset
            if (sm.instance_type == 0) {
                resubmit_preserving_field_list(3);
            } else {
                sm.egress_spec = 2;
            }
        } else if (hdr.h.op == 9) {
            mark_to_drop(sm);     // dropped, and cloned without a field list
            clone(CloneType.I2E, 5);
        } else {
            mark_to_drop(sm);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.einst = (bit<8>)sm.instance_type;
        hdr.h.espec = (bit<16>)sm.egress_spec;
        hdr.h.eport = (bit<16>)sm.egress_port;
        hdr.h.plen = (bit<16>)sm.packet_length;
        hdr.h.eiport = (bit<16>)sm.ingress_port;
        hdr.h.ea = meta.a;
        hdr.h.eb = meta.b;
        hdr.h.epport = meta.pport;
        hdr.h.erid = sm.egress_rid;
        if (sm.egress_global_timestamp >= meta.its) {
            hdr.h.flags = hdr.h.flags | 2;
        }
        if (sm.egress_global_timestamp != 0) {
            hdr.h.flags = hdr.h.flags | 4;
        }
        if (sm.parser_error != error.NoError) {
            hdr.h.flags = hdr.h.flags | 8;
        }
        if (hdr.h.op == 2 && meta.passes == 1) {
            recirculate_preserving_field_list(1);
        } else if (hdr.h.op == 4 && sm.instance_type == 0) {
            clone_preserving_field_list(CloneType.E2E, 6, 1);   // session 6: port 6
        }
    }
}

control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
