// The order of a nested control's objects in P4Info. p4c's front end inlines a control
// instance into the control that declares it: its tables, actions and externs take the place
// of the instance declaration among the outer control's (I.t1, I.sub.st, I.t2; I.r1, I.sub.sr,
// I.r2; I.a1, I.sub.sa, I.a2), after the global actions the whole control uses, in order of use
// (NoAction, then gset, which only the nested control's table lists). Checked against
// p4c-bm2-ss by TestRealP4cBM2.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }

action gset(inout H hdr, bit<8> v) { hdr.h.b = v; }

parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control Sub(inout H hdr) {
    register<bit<8>>(4) sr;
    action sa(bit<8> v) { hdr.h.b = v; sr.write(0, v); }
    table st { key = { hdr.h.b: exact; } actions = { sa; gset(hdr); NoAction; } }
    apply { st.apply(); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register<bit<8>>(4) r1;
    action a1(bit<8> v) { hdr.h.a = v; r1.write(0, v); }
    table t1 { key = { hdr.h.a: exact; } actions = { a1; NoAction; } }
    Sub() sub;
    register<bit<8>>(4) r2;
    action a2(bit<8> v) { hdr.h.a = v; r2.write(0, v); }
    table t2 { key = { hdr.h.a: exact; } actions = { a2; } default_action = a2(1); }
    apply { t1.apply(); sub.apply(hdr); t2.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
