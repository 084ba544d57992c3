// A register-heavy program for the benchmark: a NetLock-like queue with head, tail and a
// slot array, read-modify-written on every packet.
#include <core.p4>
#include <v1model.p4>

header lock_t {
    bit<8>  op;
    bit<32> lock;
    bit<32> txn;
    bit<32> head;
    bit<32> tail;
}
struct headers_t { lock_t l; }
struct meta_t { bit<32> idx; bit<32> h; bit<32> t; }

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.l); transition accept; }
}
control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    register<bit<32>>(1024) heads;
    register<bit<32>>(1024) tails;
    register<bit<32>>(65536) slots;
    counter(1024, CounterType.packets) ops;

    apply {
        meta.idx = hdr.l.lock & 1023;
        ops.count(meta.idx);
        heads.read(meta.h, meta.idx);
        tails.read(meta.t, meta.idx);
        if (hdr.l.op == 0) {
            slots.write((meta.idx << 6) | (meta.t & 63), hdr.l.txn);
            meta.t = meta.t + 1;
            tails.write(meta.idx, meta.t);
        } else {
            meta.h = meta.h + 1;
            heads.write(meta.idx, meta.h);
            bit<32> next;
            slots.read(next, (meta.idx << 6) | (meta.h & 63));
            hdr.l.txn = next;
        }
        hdr.l.head = meta.h;
        hdr.l.tail = meta.t;
        sm.egress_spec = sm.ingress_port;
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.l); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
