// Parameters of a program (-D values, with defaults under #ifndef) in every place the Go
// backend reads them at run time (bmv2/engine/gogentest, TestParams): values, a constant
// declaration, conditions, shift amounts, the bounds of slices read and written, select
// cases (exact, masked and ranges), switch labels, a hash's range, a register's size and
// index, a table's size and default action argument. One generated pipeline (params_gen.go,
// generated with the defaults) runs with other values and is compared with the interpreter on
// random packets. Two parameters it cannot take other values of: P_DIV, a divisor the code
// folds (Bind checks its value; a power of two, as bmv2 has no division: p4c-bm2-ss turns it
// into a shift), and P_W, a width (part of the program's fingerprint).
#include <core.p4>
#include <v1model.p4>

#ifndef P_VAL
#define P_VAL 7
#endif
#ifndef P_LO
#define P_LO 4
#endif
#ifndef P_SH
#define P_SH 3
#endif
#ifndef P_MASK
#define P_MASK 0xf0
#endif
#ifndef P_HI
#define P_HI 40
#endif
#ifndef P_MAX
#define P_MAX 1000
#endif
#ifndef P_CELLS
#define P_CELLS 16
#endif
#ifndef P_PORT
#define P_PORT 5
#endif
#ifndef P_DIV
#define P_DIV 4
#endif
#ifndef P_W
#define P_W 16
#endif

#define WIDE_LO (P_LO + 8)

header h_t {
    bit<8>  op;
    bit<8>  a;
    bit<8>  b;
    bit<32> x;
    bit<32> y;
    bit<P_W> z;
}
header e_t { bit<8> k; }
struct headers_t { h_t h; e_t e; }
struct meta_t { bit<32> m; }

const bit<8> LIMIT = P_VAL + 3;

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.h);
        transition select(hdr.h.op) {
            P_VAL: extra;
            P_MASK &&& P_MASK: extra;
            P_LO .. P_HI: accept;
            default: accept;
        }
    }
    state extra {
        pkt.extract(hdr.e);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(P_CELLS) cells;
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { fwd; }
        default_action = fwd(P_PORT);
        size = P_CELLS;
    }
    apply {
        hdr.h.b = hdr.h.a + P_VAL;
        meta.m = hdr.h.x / P_DIV;
        hdr.h.y = meta.m;
        if (hdr.h.a > LIMIT) {
            hdr.h.z = hdr.h.z + 1;
        }
        hdr.h.y = hdr.h.x << P_SH;
        hdr.h.y = hdr.h.y | (hdr.h.x >> (P_SH + 1));
        hdr.h.z = (bit<P_W>)hdr.h.x[P_LO + 7:P_LO];
        hdr.h.x[WIDE_LO + 7:WIDE_LO] = hdr.h.a;
        switch (hdr.h.op) {
            P_VAL: { hdr.h.a = 1; }
            P_SH: { hdr.h.a = 2; }
            default: { }
        }
        hash(meta.m, HashAlgorithm.crc32, 32w0, {hdr.h.x, hdr.h.a}, (bit<32>)P_MAX);
        cells.write((bit<32>)hdr.h.op, meta.m);
        bit<32> c;
        cells.read(c, P_CELLS - 1);
        hdr.h.x = hdr.h.x ^ c;
        if (hdr.e.isValid()) {
            hdr.e.k = hdr.e.k + (bit<8>)P_CELLS;
        }
        t.apply();
        if (sm.egress_spec == P_PORT) {
            hdr.h.op = hdr.h.op + 1;
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.h);
        pkt.emit(hdr.e);
    }
}

V1Switch(P(), V(), I(), E(), C(), D()) main;
