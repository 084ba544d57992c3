// Fields wider than 128 bits: extracted, copied, compared, assigned a constant, hashed and
// emitted (no arithmetic on them, as in bmv2 programs that carry opaque blobs).
#include <core.p4>
#include <v1model.p4>

header blob_t {
    bit<4>   tag;
    bit<200> data;
    bit<4>   pad;
}
header res_t {
    bit<8>  same;
    bit<32> crc;
}
struct headers_t { res_t res; blob_t a; blob_t b; }
struct meta_t { bit<8> x; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        pkt.extract(hdr.b);
        transition accept;
    }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.setValid();
        hdr.res.same = (hdr.a.data == hdr.b.data) ? 8w1 : 8w0;
        hash(hdr.res.crc, HashAlgorithm.crc32, 32w0, { hdr.a.data }, 64w4294967296);
        if (hdr.a.tag == 1) {
            hdr.b.data = hdr.a.data;
        } else if (hdr.a.tag == 2) {
            hdr.b.data = 200w0x0102030405060708090a0b0c0d0e0f101112131415161718;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.res); pkt.emit(hdr.a); pkt.emit(hdr.b); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
