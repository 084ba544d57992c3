// varbit: a header with variable-length options (length from a field), emitted with its
// current length, compared, copied, and included in a csum16 checksum; bmv2's errors for
// bad lengths.
#include <core.p4>
#include <v1model.p4>

header base_t {
    bit<8>  optlen;   // option bytes
    bit<8>  result;
    bit<16> csum;
}
header opts_t {
    varbit<64> data;
}
struct headers_t {
    base_t base;
    opts_t opts;
    opts_t copy;
}
struct meta_t { bit<8> x; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.base);
        pkt.extract(hdr.opts, (bit<32>)hdr.base.optlen * 8);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error == error.HeaderTooShort) {
            hdr.base.result = 4;
        } else if (sm.parser_error == error.ParserInvalidArgument) {
            hdr.base.result = 6;
        } else if (sm.parser_error == error.PacketTooShort) {
            hdr.base.result = 1;
        } else {
            hdr.copy.setValid();
            hdr.copy.data = hdr.opts.data;
            if (hdr.copy == hdr.opts) {
                hdr.base.result = 0x80;
            }
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }

control C(inout headers_t hdr, inout meta_t meta) {
    apply {
        update_checksum(hdr.opts.isValid(), { hdr.base.optlen, hdr.opts.data }, hdr.base.csum, HashAlgorithm.csum16);
    }
}

control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.base);
        pkt.emit(hdr.opts);
        pkt.emit(hdr.copy);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
