// Parser features and parser errors: select with masks, ranges, tuples and default,
// lookahead, advance, header stacks, verify with a program error, PacketTooShort (bmv2 goes on
// with parser_error set), a select matching nothing (bmv2 with p4c's JSON: no error, it stops).
#include <core.p4>
#include <v1model.p4>

error { BadVersion }

header first_t {
    bit<8> kind;
    bit<8> sub;
}
header tag_t {
    bit<7> value;
    bit<1> bos;
}
header tail_t {
    bit<16> data;
}
header report_t {
    bit<8>  err;
    bit<8>  path;
    bit<8>  ntags;
    bit<8>  peek;
}

struct headers_t {
    report_t  report;
    first_t   first;
    tag_t[3]  tags;
    tail_t    tail;
}
struct meta_t { bit<8> path; bit<8> peek; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        meta.peek = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.first);
        transition select(hdr.first.kind, hdr.first.sub) {
            (0x10 &&& 0xF0, _): tags;       // kind 0x1X
            (0x20 .. 0x2F, 0x01): skip;     // kind 0x20-0x2F, sub 1
            (0x30, _): check;
            (0x40, _): reject;
            (0x50, _): tail;
            default: noroute;
        }
    }
    state tags {
        meta.path = 1;
        pkt.extract(hdr.tags.next);
        transition select(hdr.tags.last.bos) {
            1: tail;
            default: tags;
        }
    }
    state skip {
        meta.path = 2;
        pkt.advance(16);
        transition tail;
    }
    state check {
        meta.path = 3;
        verify(hdr.first.sub == 4, error.BadVersion);
        transition tail;
    }
    state tail {
        pkt.extract(hdr.tail);
        transition accept;
    }
    state noroute {
        meta.path = 9;
        transition select(hdr.first.sub) {
            0xEE: accept;
        }
    }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        hdr.report.setValid();
        if (sm.parser_error == error.NoError) {
            hdr.report.err = 0;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.report.err = 1;
        } else if (sm.parser_error == error.NoMatch) {
            hdr.report.err = 2;
        } else if (sm.parser_error == error.StackOutOfBounds) {
            hdr.report.err = 3;
        } else if (sm.parser_error == error.BadVersion) {
            hdr.report.err = 4;
        } else {
            hdr.report.err = 0xFF;
        }
        hdr.report.path = meta.path;
        hdr.report.peek = meta.peek;
        if (hdr.tags[2].isValid()) {
            hdr.report.ntags = 3;
        } else if (hdr.tags[1].isValid()) {
            hdr.report.ntags = 2;
        } else if (hdr.tags[0].isValid()) {
            hdr.report.ntags = 1;
        } else {
            hdr.report.ntags = 0;
        }
        sm.egress_spec = 1;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
