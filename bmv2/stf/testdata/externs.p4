// Externs: registers (8 and 128 bits), indexed counters, meters, hash (crc16, crc32,
// identity, csum16, xor16), truncate.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>   op;
    bit<8>   idx;
    bit<32>  data;
    bit<8>   reg8;
    bit<128> reg128;
    bit<16>  crc16;
    bit<32>  crc32;
    bit<16>  ident;
    bit<16>  csum;
    bit<16>  xor;
    bit<16>  modhash;
    bit<8>   color;
}

header opt_t {
    bit<16> v;
}

struct headers_t { h_t h; opt_t opt; }
struct meta_t { bit<8> tmp; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<8>>(16) r8;
    register<bit<128>>(4) r128;
    counter(8, CounterType.packets_and_bytes) pkts;
    meter(4, MeterType.packets) m;

    apply {
        sm.egress_spec = 1;
        pkts.count((bit<32>)hdr.h.idx);
        // op 1: add data to r8[idx] and return the new value; op 2: read r128[idx]
        // op 3: write r128[idx] = data ++ data ++ data ++ data; op 4: hashes; op 5: meter;
        // op 6: truncate to 4 bytes; op 7: hash with an invalid header's field
        if (hdr.h.op == 1) {
            bit<8> v;
            r8.read(v, (bit<32>)hdr.h.idx);
            v = v + hdr.h.data[7:0];
            r8.write(value = v, index = (bit<32>)hdr.h.idx);
            hdr.h.reg8 = v;
        } else if (hdr.h.op == 2) {
            r128.read(hdr.h.reg128, (bit<32>)hdr.h.idx);
        } else if (hdr.h.op == 3) {
            r128.write((bit<32>)hdr.h.idx, hdr.h.data ++ hdr.h.data ++ hdr.h.data ++ hdr.h.data);
        } else if (hdr.h.op == 4) {
            hash(hdr.h.crc16, HashAlgorithm.crc16, 16w0, { hdr.h.data }, 32w65536);
            hash(hdr.h.crc32, HashAlgorithm.crc32, 32w0, { hdr.h.data }, 64w4294967296);
            hash(hdr.h.ident, HashAlgorithm.identity, 16w0, { hdr.h.data }, 32w65536);
            hash(hdr.h.csum, HashAlgorithm.csum16, 16w0, { hdr.h.data, hdr.h.idx, hdr.h.op }, 32w65536);
            hash(hdr.h.xor, HashAlgorithm.xor16, 16w0, { hdr.h.data }, 32w65536);
            hash(hdr.h.modhash, HashAlgorithm.crc32, 16w100, { hdr.h.data }, 32w10);
        } else if (hdr.h.op == 5) {
            m.execute_meter((bit<32>)hdr.h.idx, hdr.h.color);
        } else if (hdr.h.op == 6) {
            truncate(4);
        } else if (hdr.h.op == 7) {
            // hdr.opt is invalid, but p4c-bm2-ss hashes a copy of the data: 0xFFFF counts.
            hdr.opt.v = 0xFFFF;
            hash(hdr.h.crc16, HashAlgorithm.crc16, 16w0, { hdr.opt.v, hdr.h.data }, 32w65536);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
