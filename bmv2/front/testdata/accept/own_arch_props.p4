/* A program that declares its architecture itself (no v1model.p4 or tna.p4): the table
 * properties idle_timeout and requires_versioning, which bf-p4c knows, are accepted whatever the
 * architecture, as p4c's front end accepts them; an @optional abstract method (Tofino 2's
 * RegisterAction overflow and underflow) may be left unimplemented. */
#include <core.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
parser Prs(packet_in p, out H hdr) { state start { p.extract(hdr.h); transition accept; } }
extern Stateful<T> {
    Stateful();
    T run();
    abstract T step(in T x);
    @optional abstract void overflow(inout T x);
}
control Ctl(inout H hdr) {
    Stateful<bit<8>>() counter = {
        bit<8> step(in bit<8> x) { return x + 1; }
    };
    action set(bit<8> v) { hdr.h.a = v; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set; NoAction; }
        idle_timeout = true;
        requires_versioning = false;
        size = 16;
    }
    apply {
        t.apply();
        hdr.h.a = counter.run();
    }
}
parser MyP<H>(packet_in p, out H hdr);
control MyC<H>(inout H hdr);
package MyArch<H>(MyP<H> p, MyC<H> c);
MyArch(Prs(), Ctl()) main;
