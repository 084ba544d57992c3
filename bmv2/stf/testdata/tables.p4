// Every table kind: exact, lpm, ternary with priorities, range, optional, const entries,
// const and settable default actions, hit/miss, action_run, action data.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  k1;
    bit<16> k2;
    bit<32> k3;
    bit<8>  out_exact;
    bit<8>  out_tern;
    bit<8>  out_range;
    bit<8>  out_opt;
    bit<8>  out_const;
    bit<8>  out_run;
    bit<8>  out_hit;
}

struct headers_t { h_t h; }
struct meta_t { bit<8> x; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    action set_exact(bit<8> v) { hdr.h.out_exact = v; }
    action set_tern(bit<8> v) { hdr.h.out_tern = v; }
    action set_range(bit<8> v) { hdr.h.out_range = v; }
    action set_opt(bit<8> v) { hdr.h.out_opt = v; }
    action set_const(bit<8> v) { hdr.h.out_const = v; }
    action a1() { hdr.h.out_run = 1; }
    action a2() { hdr.h.out_run = 2; }
    action miss_default(bit<8> v) { hdr.h.out_exact = v; }

    table t_exact {
        key = { hdr.h.k1: exact; hdr.h.k2: exact; }
        actions = { set_exact; miss_default; }
        default_action = miss_default(0xEE);
    }
    table t_tern {
        key = { hdr.h.k3: ternary; }
        actions = { set_tern; NoAction; }
        default_action = NoAction();
    }
    table t_range {
        key = { hdr.h.k2: range; }
        actions = { set_range; }
        const default_action = set_range(0xDD);
    }
    table t_opt {
        key = { hdr.h.k1: optional; hdr.h.k2: exact; }
        actions = { set_opt; NoAction; }
    }
    table t_const {
        key = { hdr.h.k1: ternary; hdr.h.k2: range; }
        actions = { set_const; }
        const entries = {
            (0x01 &&& 0x0F, 0 .. 100): set_const(1);
            (0x01 &&& 0x0F, _): set_const(2);
            (_, 200 .. 300): set_const(3);
        }
        const default_action = set_const(0);
    }
    table t_run {
        key = { hdr.h.k1: exact; }
        actions = { a1; a2; }
        default_action = a2();
    }
    apply {
        if (t_exact.apply().hit) {
            hdr.h.out_hit = 1;
        } else {
            hdr.h.out_hit = 0;
        }
        t_tern.apply();
        t_range.apply();
        t_opt.apply();
        t_const.apply();
        switch (t_run.apply().action_run) {
            a1: { hdr.h.out_run = hdr.h.out_run + 0x10; }
            default: { hdr.h.out_run = hdr.h.out_run + 0x20; }
        }
        sm.egress_spec = 2;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
