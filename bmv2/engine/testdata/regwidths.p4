// Registers of every storage class of the engine (cells of at most 32, at most 64 and up to
// 128 bits): op 2k writes val into register k at idx, op 2k+1 reads it into res.
#include <core.p4>
#include <v1model.p4>

header req_t {
    bit<8>   op;
    bit<16>  idx;
    bit<128> val;
    bit<128> res;
}
struct headers_t { req_t r; }
struct meta_t { bit<16> idx; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.r); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(16)   r8;
    register<bit<32>>(16)  r32;
    register<bit<33>>(16)  r33;
    register<bit<64>>(16)  r64;
    register<bit<65>>(16)  r65;
    register<bit<128>>(16) r128;

    apply {
        meta.idx = hdr.r.idx;
        if (hdr.r.op == 0) { r8.write((bit<32>)meta.idx, (bit<8>)hdr.r.val); }
        else if (hdr.r.op == 1) { bit<8> v; r8.read(v, (bit<32>)meta.idx); hdr.r.res = (bit<128>)v; }
        else if (hdr.r.op == 2) { r32.write((bit<32>)meta.idx, (bit<32>)hdr.r.val); }
        else if (hdr.r.op == 3) { bit<32> v; r32.read(v, (bit<32>)meta.idx); hdr.r.res = (bit<128>)v; }
        else if (hdr.r.op == 4) { r33.write((bit<32>)meta.idx, (bit<33>)hdr.r.val); }
        else if (hdr.r.op == 5) { bit<33> v; r33.read(v, (bit<32>)meta.idx); hdr.r.res = (bit<128>)v; }
        else if (hdr.r.op == 6) { r64.write((bit<32>)meta.idx, (bit<64>)hdr.r.val); }
        else if (hdr.r.op == 7) { bit<64> v; r64.read(v, (bit<32>)meta.idx); hdr.r.res = (bit<128>)v; }
        else if (hdr.r.op == 8) { r65.write((bit<32>)meta.idx, (bit<65>)hdr.r.val); }
        else if (hdr.r.op == 9) { bit<65> v; r65.read(v, (bit<32>)meta.idx); hdr.r.res = (bit<128>)v; }
        else if (hdr.r.op == 10) { r128.write((bit<32>)meta.idx, hdr.r.val); }
        else if (hdr.r.op == 11) { bit<128> v; r128.read(v, (bit<32>)meta.idx); hdr.r.res = v; }
        sm.egress_spec = sm.ingress_port;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.r); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
