/* A NetLock-like queue in registers, exercising the v1model externs the switch program needs. */
#include <core.p4>
#include <v1model.p4>
#include "lockqueue.h.p4"

#ifdef LOCKQUEUE_H
const bit<32> SLOTS = QUEUE_SLOTS;
#else
#error lockqueue.h.p4 was not included
#endif

#if defined(CPU_PORT) && CPU_PORT == 255
const bit<9> CPU = CPU_PORT;
#endif

#define IS_RESUBMITTED(m) ((m).instance_type == 6)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

#undef QUEUE_SLOTS
#ifdef QUEUE_SLOTS
#error QUEUE_SLOTS is still defined
#endif

parser LockParser(packet_in pkt, out headers hdr, inout metadata meta,
                  inout standard_metadata_t sm) {
    state start {
        transition select(sm.ingress_port) {
            CPU: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x8847: parse_labels;
            0x88b5 &&& 0xffff: parse_lock;
            0x9000 .. 0x90ff: accept;
            default: accept;
        }
    }
    state parse_labels {
        pkt.extract(hdr.labels.next);
        transition select(hdr.labels.last.bos) {
            1w1: parse_lock;
            default: parse_labels;
        }
    }
    state parse_lock {
        bit<8> op = pkt.lookahead<bit<8>>();
        verify(op <= 8w3, error.ParserInvalidArgument);
        pkt.extract(hdr.lock);
        transition accept;
    }
}

control LockVerify(inout headers hdr, inout metadata meta) {
    apply { }
}

bit<32> next_slot(in bit<32> s) {
    return s == SLOTS - 1 ? 32w0 : s + 1;
}

control LockIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<32>>(SLOTS) queue_txn;
    register<bit<32>>(1024) head_reg;
    register<bit<32>>(1024) tail_reg;
    counter(1024, CounterType.packets_and_bytes) lock_ops;
    direct_counter(CounterType.packets) lock_table_hits;
    meter(64, MeterType.packets) tenant_meter;
    direct_meter<bit<2>>(MeterType.bytes) route_meter;
    action_profile(128) route_profile;
    bit<2> color;

    action set_bounds(bit<32> lo, bit<32> hi) {
        meta.head = lo;
        meta.tail = hi;
        lock_table_hits.count();
    }

    @name("forward_to_server")
    action to_server(bit<9> port) {
        sm.egress_spec = port;
        meta.overflow = 1;
    }

    action drop() {
        mark_to_drop(sm);
    }

    action route(bit<9> port) {
        sm.egress_spec = port;
        route_meter.read(color);
    }

    table lock_table {
        key = {
            hdr.lock.lockId: exact @name("lock_id");
            hdr.lock.mode: ternary;
        }
        actions = {
            set_bounds;
            @defaultonly to_server;
        }
        default_action = to_server(1);
        counters = lock_table_hits;
        size = 4096;
    }

    table routes {
        key = {
            hdr.ethernet.dst: exact;
            hdr.ethernet.etherType[15:8]: range;
            hdr.lock.isValid(): optional;
        }
        actions = {
            route;
            @tableonly drop;
            NoAction;
        }
        meters = route_meter;
        implementation = route_profile;
    }

    table classify {
        key = {
            hdr.lock.op: exact;
        }
        actions = {
            drop;
            NoAction;
        }
        const default_action = NoAction();
        const entries = {
            LockOp.GRANT: drop();
            (LockOp.PUSH_BACK): NoAction();
        }
    }

    apply {
        if (hdr.packet_out.isValid()) {
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (!hdr.lock.isValid()) {
            routes.apply();
            return;
        }
        lock_ops.count(hdr.lock.lockId);
        tenant_meter.execute_meter(hdr.lock.txnId & 63, color);
        classify.apply();
        switch (lock_table.apply().action_run) {
            set_bounds: {
                bit<32> tail;
                tail_reg.read(tail, hdr.lock.lockId);
                if (hdr.lock.op == LockOp.ACQUIRE) {
                    queue_txn.write(tail, hdr.lock.txnId);
                    tail_reg.write(hdr.lock.lockId, next_slot(tail));
                    meta.slot = tail;
                } else {
                    bit<32> head;
                    head_reg.read(head, hdr.lock.lockId);
                    head_reg.write(hdr.lock.lockId, next_slot(head));
                    meta.rounds = meta.rounds |+| 1;
                    resubmit_preserving_field_list(1);
                }
            }
            default: { }
        }
        if (meta.overflow == 1w1) {
            digest<learn_t>(1, { hdr.ethernet.src, sm.ingress_port });
            clone_preserving_field_list(CloneType.I2E, 32w5, 1);
        }
    }
}

control LockEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (IS_RESUBMITTED(sm)) {
            meta.rounds = MIN(meta.rounds, 8w16);
        }
        if (sm.instance_type == 1 && hdr.lock.isValid()) {
            hdr.lock.op = LockOp.GRANT;
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = sm.ingress_port;
            hdr.packet_in._pad = 0;
            bit<16> mix = hdr.lock.txnId[15:0] ^ (hdr.lock.mode ++ 8w0) >> 8;
            hdr.ethernet.etherType = (mix > 16w0x600) ? mix : 16w0x88b5;
            log_msg("granted lock {} to txn {}", { hdr.lock.lockId, hdr.lock.txnId });
        }
    }
}

control LockCompute(inout headers hdr, inout metadata meta) {
    apply { }
}

control LockDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.labels);
        pkt.emit(hdr.lock);
    }
}

V1Switch(LockParser(), LockVerify(), LockIngress(), LockEgress(), LockCompute(), LockDeparser()) main;
