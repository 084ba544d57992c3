// Digest, log_msg, assert, random, and register accesses for the Tofino-constraint mode.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  a;
    bit<16> rnd;
    bit<32> val;
}
struct headers_t { h_t h; }
struct learn_t {
    bit<8>  a;
    bit<9>  port;
}
struct meta_t { bit<8> x; }

// Used by ingress and egress (op 13): not allowed in Tofino-constraint mode.
register<bit<32>>(4) both_gresses;

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

// A sub-control with an extern parameter.
control Bump(inout bit<32> v, register<bit<32>> r) {
    apply {
        r.read(v, 7);
        v = v + 10;
        r.write(7, v);
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) regs;
    direct_meter<bit<8>>(MeterType.packets) dm;
    Bump() bump;

    action colour() {
        bit<8> c;
        dm.read(c);
        hdr.h.a = c;
    }
    table metered {
        key = { hdr.h.a: exact; }
        actions = { colour; NoAction; }
        meters = dm;
    }

    action rmw() {
        bit<32> v;
        regs.read(v, (bit<32>)hdr.h.a);
        regs.write((bit<32>)hdr.h.a, v + 1);
        hdr.h.val = v + 1;
    }
    action twice() {
        bit<32> v;
        regs.read(v, 0);
        regs.read(v, 1);
        hdr.h.val = v;
    }
    // Accesses the Tofino-constraint mode must refuse or accept (TestTofinoConstraints).
    action reread() {
        bit<32> v;
        bit<32> w;
        regs.read(v, 0);
        hdr.h.val = v + 1;
        regs.read(w, 0);
        hdr.h.val = hdr.h.val + w;
    }
    action rww() {
        bit<32> v;
        regs.read(v, 0);
        regs.write(0, v + 1);
        regs.write(0, v + 2);
    }
    action wr() {
        bit<32> v;
        regs.write(0, 5);
        regs.read(v, 0);
        hdr.h.val = v;
    }
    action inner_read() {
        bit<32> v;
        regs.read(v, 1);
        meta.x = (bit<8>)v;
    }
    action nested() {
        inner_read();
        regs.write(1, (bit<32>)meta.x + 1);
    }
    action read_only() {
        bit<32> v;
        regs.read(v, 2);
        hdr.h.val = v;
    }
    table t {
        key = { hdr.h.op: exact; }
        actions = { rmw; twice; NoAction; }
        const entries = {
            3: rmw();
            4: twice();
        }
    }
    apply {
        sm.egress_spec = 2;
        if (hdr.h.op == 1) {
            digest<learn_t>(1, { hdr.h.a, sm.ingress_port });
            log_msg("a={} port={}", { hdr.h.a, sm.ingress_port });
        } else if (hdr.h.op == 2) {
            assert(hdr.h.a != 0);
            random(hdr.h.rnd, 16w100, 16w200);
        } else if (hdr.h.op == 5) {
            rmw();
            rmw();
        } else if (hdr.h.op == 6) {
            hdr.h.val = (bit<32>)sm.ingress_global_timestamp;
        } else if (hdr.h.op == 7) {
            metered.apply();
        } else if (hdr.h.op == 8) {
            bump.apply(hdr.h.val, regs);
        } else if (hdr.h.op == 9) {
            reread();
        } else if (hdr.h.op == 10) {
            rww();
        } else if (hdr.h.op == 11) {
            wr();
        } else if (hdr.h.op == 12) {
            nested();
        } else if (hdr.h.op == 13) {
            both_gresses.write(0, 1);
        } else if (hdr.h.op == 14) {
            read_only();
            regs.write(2, hdr.h.val + 1);
        }
        t.apply();
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (hdr.h.op == 13) {
            both_gresses.write(1, 2);
        }
    }
}
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
