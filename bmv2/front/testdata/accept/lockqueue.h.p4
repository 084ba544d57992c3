/* Shared declarations for lockqueue.p4; included with a relative path. */
#ifndef LOCKQUEUE_H
#define LOCKQUEUE_H

#define QUEUE_SLOTS 1024
#define CPU_PORT 255

enum bit<8> LockOp {
    ACQUIRE = 0,
    RELEASE = 1,
    PUSH_BACK = 2,
    GRANT = 3
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etherType;
}

header lock_t {
    LockOp  op;
    bit<8>  mode;
    bit<32> lockId;
    bit<32> txnId;
}

header label_t {
    bit<7> value;
    bit<1> bos;
}

struct headers {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    label_t[4]   labels;
    lock_t       lock;
}

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct metadata {
    @field_list(1) bit<32> slot;
    @field_list(1) bit<8>  rounds;
    bit<32> head;
    bit<32> tail;
    bit<1>  overflow;
}

#endif
