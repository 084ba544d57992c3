// Expression and statement shapes for the Go backend (bmv2/engine/gogentest): operator
// precedence in generated Go, left-to-right order against functions with inout arguments,
// constant folding through arguments, returns from actions, functions and controls, switch on
// action_run and on values, out and inout parameters, hash inputs over headers that may be
// invalid, registers, counters, slices as targets. The test compares the generated pipeline's
// output with the interpreter's on random packets.
#include <core.p4>
#include <v1model.p4>

header a_t {
    bit<8>  op;
    bit<8>  x;
    bit<16> y;
    bit<32> z;
    bit<3>  p;
    bit<13> q;
    bit<48> w;
    bit<64> v;
}
header b_t {
    bit<8>  k;
    bit<24> m;
}
header o_t {
    bit<8>  r1;
    bit<8>  r2;
    bit<16> r3;
    bit<32> r4;
    bit<32> r5;
    bit<64> r6;
    bit<64> r7;
    bit<8>  r8;
    bit<8>  r9;
    bit<16> r10;
}
struct headers_t { a_t a; b_t b; o_t o; }
struct inner_t { bit<8> c; bit<16> d; }
struct pair_t { bit<8> x; bit<8> y; }
struct meta_t { bit<8> t; inner_t inr; bit<32> h1; bit<32> h2; pair_t p; }

bit<8> bump(inout bit<8> x) {
    x = x + 8w10;
    return 8w1;
}

bit<16> clamp(in bit<16> v, in bit<16> hi) {
    if (v > hi) {
        return hi;
    }
    return v;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.a);
        transition select(hdr.a.op[1:0], hdr.a.x) {
            (2w0, 8w0 &&& 8w0x80): with_b;
            (2w1, _): with_b;
            (2w2, 8w10 .. 8w20): accept;
            default: accept;
        }
    }
    state with_b {
        pkt.extract(hdr.b);
        transition accept;
    }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control Sub(inout inner_t io, in bit<8> k) {
    action set(bit<8> c) { io.c = c + k; }
    apply {
        if (k == 0) {
            return;
        }
        set(k * 3);
        io.d = io.d |+| (bit<16>)k;
    }
}

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(8) reg;
    counter(4, CounterType.packets_and_bytes) cnt;
    Sub() sub;

    action early(bit<8> k) {
        hdr.o.r1 = k;
        if (hdr.a.x[0:0] == 1) {
            return;
        }
        hdr.o.r1 = k + 8w1;
    }
    action out2(out bit<16> o, in bit<16> i) {
        o = i ^ 16w0x5a5a;
    }
    action opsel(inout bit<64> acc, bit<8> op) {
        if (op == 0) {
            acc = acc + 1;
        } else if (op == 1) {
            acc = acc << 3;
        } else {
            acc = acc * 7;
        }
    }
    action oi(out bit<8> o, in bit<8> i) {
        hdr.o.r1 = hdr.o.r1 ^ i;
        o = i + 1;
    }
    // Aliased arguments: the body reads the argument through another name (copy-in/copy-out).
    action alias1(inout bit<8> x) {
        x = x + 1;
        hdr.o.r8 = hdr.o.r8 ^ meta.t;
    }
    action alias2(inout bit<8> x, inout bit<8> y) {
        x = x + 1;
        y = y + 2;
    }
    action ax(inout bit<8> x) {
        x = x + 3;
        hdr.o.r9 = hdr.o.r2;
        if (hdr.a.op == 7) {
            exit;
        }
    }
    // A control-local variable passed to an action that also reads it by name: the body
    // sees the value from before the call (copy-in/copy-out), for inout and for out.
    bit<8> cl;
    action rdi(inout bit<8> y) {
        y = y + 5;
        hdr.o.r1 = hdr.o.r1 ^ cl;
    }
    action rdo(out bit<8> y) {
        hdr.o.r2 = hdr.o.r2 ^ cl;
        y = 3;
    }
    // mark_to_drop on a copy-in/copy-out argument: the copy is marked, not the header slots.
    action mdrop(inout standard_metadata_t m) {
        mark_to_drop(m);
        hdr.o.r3 = hdr.o.r3 ^ (bit<16>)m.egress_spec;
    }
    action a1(bit<8> v) { hdr.o.r8 = v; }
    action a2() { hdr.o.r8 = 0xa2; exit; }
    table t {
        key = { hdr.a.op: exact; }
        actions = { a1; a2; NoAction; }
        const entries = {
            8w1 : a1(8w0x11);
            8w2 : a2();
            8w3 : a1(8w0x33);
        }
        default_action = NoAction();
    }
    apply {
        hdr.o.setValid();
        early(8w20);
        // Precedence: each of these mixes operators of one Go precedence level.
        hdr.o.r2 = hdr.a.x * (hdr.a.z[15:8]) & 0x7f;
        hdr.o.r3 = (hdr.a.y >> 3) * 5 + (bit<16>)hdr.a.x[7:4] << 2;
        hdr.o.r4 = hdr.a.z & (hdr.a.x ++ hdr.a.y ++ hdr.a.x) | hdr.a.z[31:16] ++ hdr.a.y;
        hdr.o.r5 = (bit<32>)(hdr.a.p ++ hdr.a.q) * 3 - (hdr.a.z >> hdr.a.x[4:0]);
        hdr.o.r6 = hdr.a.v / 8 + hdr.a.v % 16 + (hdr.a.w ++ hdr.a.y) - ~hdr.a.v;
        hdr.o.r7 = (hdr.a.v |-| (bit<64>)hdr.a.z) ^ (hdr.a.v[63:32] ++ hdr.a.z);
        // Shifts by constants at least the width: everything shifted out.
        hdr.o.r8 = (hdr.a.x << 8) | (hdr.a.x >> 9) | (hdr.a.x << 3);
        hdr.o.r3 = hdr.o.r3 + (hdr.a.y >> 16) + (hdr.a.y << 70);
        // Order: the left operand is read before bump changes it.
        meta.t = hdr.a.x;
        hdr.o.r9 = meta.t + bump(meta.t);
        hdr.o.r9 = hdr.o.r9 + meta.t;
        // Calls in conditional operands run only when they decide (bump writes meta.t).
        meta.t = hdr.a.x;
        if (hdr.a.op == 1 || bump(meta.t) == 1) {
            hdr.o.r9 = hdr.o.r9 ^ 0x10;
        }
        if (hdr.a.op == 2 && bump(meta.t) == 1) {
            hdr.o.r9 = hdr.o.r9 ^ 0x20;
        }
        hdr.o.r9 = hdr.o.r9 + ((hdr.a.op == 3) ? bump(meta.t) : meta.t);
        bool same = (meta.t == 8w7) == (bump(meta.t) == 1);
        hdr.o.r9 = hdr.o.r9 + meta.t + (same ? 8w1 : 8w0);
        // Functions with returns, out parameters, constant-folded op codes.
        hdr.o.r10 = clamp(hdr.a.y, 16w1000);
        bit<16> o;
        out2(o, hdr.o.r10);
        hdr.o.r10 = hdr.o.r10 + o;
        bit<64> acc = hdr.a.v;
        opsel(acc, 0);
        opsel(acc, 1);
        opsel(acc, 2);
        hdr.o.r6 = hdr.o.r6 ^ acc;
        // An out argument that is also an in argument: copied in before it is cleared.
        bit<8> tt = hdr.a.x;
        oi(tt, tt);
        hdr.o.r2 = hdr.o.r2 ^ tt;
        // Slices as targets, bools, ternaries.
        hdr.o.r4[7:0] = hdr.a.x;
        hdr.o.r4[31:28] = hdr.a.op[3:0];
        bool big = hdr.a.y > 16w1000 && hdr.a.x != 0 || !(hdr.a.p == 3w5);
        hdr.o.r2 = big ? hdr.o.r2 + 1 : hdr.o.r2 - 1;
        hdr.o.r3 = (big == (hdr.a.x > 8w7)) ? 16w1 : 16w2;
        // A sub-control with a return and an in argument.
        meta.inr.c = hdr.a.x;
        meta.inr.d = hdr.a.y;
        sub.apply(meta.inr, hdr.a.op & 3);
        hdr.o.r1 = hdr.o.r1 ^ meta.inr.c;
        hdr.o.r10 = hdr.o.r10 ^ meta.inr.d;
        // Hash over fields of a header that may be invalid, and of one always valid.
        hash(meta.h1, HashAlgorithm.crc32, 32w0, {hdr.b.k, hdr.a.x, hdr.b.m}, 32w0);
        hash(meta.h2, HashAlgorithm.crc16, 32w5, {hdr.a.y, hdr.a.p}, 32w1000);
        hdr.o.r5 = hdr.o.r5 ^ meta.h1 ^ meta.h2;
        // Registers and counters.
        bit<32> rv;
        reg.read(rv, (bit<32>)hdr.a.x[2:0]);
        reg.write((bit<32>)hdr.a.x[2:0], rv + hdr.a.z);
        hdr.o.r4 = hdr.o.r4 + rv;
        cnt.count((bit<32>)hdr.a.op[1:0]);
        // Tables: action_run and hit.
        switch (t.apply().action_run) {
            a1: { hdr.o.r9 = hdr.o.r9 | 0x80; }
            NoAction: { hdr.o.r9 = hdr.o.r9 | 0x40; }
        }
        switch (hdr.a.op) {
            4: 
            5: { hdr.o.r8 = 0x45; }
            6: { hdr.o.r8 = 0x66; }
            default: { hdr.o.r8 = hdr.o.r8 + 1; }
        }
        cl = hdr.a.x;
        rdi(cl);
        hdr.o.r1 = hdr.o.r1 + cl;
        rdo(cl);
        hdr.o.r1 = hdr.o.r1 + cl;
        // Struct and header assignments read every field before storing any.
        meta.p = {hdr.a.x, hdr.a.op};
        meta.p = {meta.p.y, meta.p.x};
        hdr.o.r8 = hdr.o.r8 ^ meta.p.x;
        hdr.o.r9 = hdr.o.r9 ^ meta.p.y;
        hdr.b = {hdr.b.isValid() ? hdr.b.k + 1 : 8w2, hdr.b.m};
        // A constant shifted by a variable, bound to an in parameter; a constant hash input
        // crossing a 64-bit word.
        hdr.o.r10 = hdr.o.r10 ^ clamp(16w1 << hdr.a.x[3:0], 16w300);
        hash(meta.h1, HashAlgorithm.crc32, 32w0, {hdr.a.v[55:0], 16w0xabcd}, 32w0);
        hdr.o.r5 = hdr.o.r5 ^ meta.h1;
        // random() over the full 64-bit range (its value is not compared).
        bit<64> rr;
        random(rr, 64w0, 64w0xffffffffffffffff);
        hdr.o.r7 = hdr.o.r7 ^ (rr & 0);
        // mark_to_drop of a copy and of a local standard_metadata_t.
        standard_metadata_t lsm = sm;
        mark_to_drop(lsm);
        hdr.o.r3 = hdr.o.r3 ^ (bit<16>)lsm.egress_spec;
        mdrop(sm);
        sm.egress_spec = 2;
        meta.t = hdr.a.x;
        alias1(meta.t);
        alias2(meta.t, meta.t);
        hdr.o.r10 = hdr.o.r10 + (bit<16>)meta.t;
        ax(hdr.o.r2);
        if (hdr.a.op == 9) {
            mark_to_drop(sm);
            exit;
        }
        sm.egress_spec = 1;
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply { pkt.emit(hdr.a); pkt.emit(hdr.b); pkt.emit(hdr.o); }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
