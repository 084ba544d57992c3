/* netlock's declarations of the v1model architecture (BMv2 simple_switch), written from the
 * v1model documentation and the BMv2 simple_switch documentation. They describe what the
 * netlock software switch implements. */
#ifndef _V1_MODEL_P4_
#define _V1_MODEL_P4_

#include <core.p4>

/* Programs may pick the v1model revision before including this file; 20180101 is the default
 * (32-bit indices), 20200408 makes the index types of counter, meter and register generic. */
#ifndef V1MODEL_VERSION
#define V1MODEL_VERSION 20180101
#endif
#if V1MODEL_VERSION < 20180101 || V1MODEL_VERSION > 20200408
#error unknown v1model version; the supported versions are 20180101 to 20200408
#endif
const bit<32> __v1model_version = V1MODEL_VERSION;

/* Extra match kinds of the v1model architecture. */
match_kind {
    range,
    optional,
    selector
}

/* bmv2 ports are 9 bits wide; port 511 is the drop port. */
#if V1MODEL_VERSION >= 20200408
typedef bit<9> PortId_t;
typedef bit<48> EgressInstance_t;
typedef bit<8> ClassId_t;
#endif

/* Intrinsic metadata of simple_switch, one field per field bmv2 provides. */
@metadata @name("standard_metadata")
struct standard_metadata_t {
#if V1MODEL_VERSION >= 20200408
    PortId_t ingress_port;
    PortId_t egress_spec;
    PortId_t egress_port;
#else
    bit<9> ingress_port;
    bit<9> egress_spec;
    bit<9> egress_port;
#endif
    /* bmv2's instance types: 0 normal, 1 ingress clone, 2 egress clone, 3 coalesced,
     * 4 recirculated, 5 replicated (multicast), 6 resubmitted. */
    bit<32> instance_type;
    /* Length of the packet in bytes as received (not updated by the pipeline). */
    bit<32> packet_length;
    @alias("queueing_metadata.enq_timestamp") bit<32> enq_timestamp;
    @alias("queueing_metadata.enq_qdepth") bit<19> enq_qdepth;
    @alias("queueing_metadata.deq_timedelta") bit<32> deq_timedelta;
    @alias("queueing_metadata.deq_qdepth") bit<19> deq_qdepth;
    @alias("intrinsic_metadata.ingress_global_timestamp") bit<48> ingress_global_timestamp;
    @alias("intrinsic_metadata.egress_global_timestamp") bit<48> egress_global_timestamp;
    @alias("intrinsic_metadata.mcast_grp") bit<16> mcast_grp;
    @alias("intrinsic_metadata.egress_rid") bit<16> egress_rid;
    /* Set when verify_checksum finds a mismatch. */
    bit<1> checksum_error;
    /* error.NoError, or the error the parser rejected the packet with. */
    error parser_error;
    @alias("intrinsic_metadata.priority") bit<3> priority;
}

enum CounterType {
    packets,
    bytes,
    packets_and_bytes
}

enum MeterType {
    packets,
    bytes
}

/* An array of counters indexed from the data plane. */
#if V1MODEL_VERSION >= 20200408
extern counter<I> {
    counter(bit<32> size, CounterType type);
    void count(in I index);
}
#else
extern counter {
    counter(bit<32> size, CounterType type);
    void count(in bit<32> index);
}
#endif

/* One counter per entry of the table that names it in its counters property. */
extern direct_counter {
    direct_counter(CounterType type);
    void count();
}

#define V1MODEL_METER_COLOR_GREEN 0
#define V1MODEL_METER_COLOR_YELLOW 1
#define V1MODEL_METER_COLOR_RED 2

/* An array of two-rate three-color meters. */
#if V1MODEL_VERSION >= 20200408
extern meter<I> {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in I index, out T result);
}
#else
extern meter {
    meter(bit<32> size, MeterType type);
    void execute_meter<T>(in bit<32> index, out T result);
}
#endif

/* One meter per entry of the table that names it in its meters property. */
extern direct_meter<T> {
    direct_meter(MeterType type);
    void read(out T result);
}

/* An array of stateful cells, readable and writable from the data plane. */
#if V1MODEL_VERSION >= 20200408
extern register<T, I> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in I index);
    void write(in I index, in T value);
}
#else
extern register<T> {
    register(bit<32> size);
    @noSideEffects
    void read(out T result, in bit<32> index);
    void write(in bit<32> index, in T value);
}
#endif

/* Action profile: table entries point at members shared between entries. */
extern action_profile {
    action_profile(bit<32> size);
}

/* Writes a random value in [lo, hi] to result. */
extern void random<T>(out T result, in T lo, in T hi);

/* Sends data to the control plane as a digest message for receiver. */
extern void digest<T>(in bit<32> receiver, in T data);

enum HashAlgorithm {
    crc32,
    crc32_custom,
    crc16,
    crc16_custom,
    random,
    identity,
    csum16,
    xor16
}

/* Marks the packet to be dropped by setting egress_spec to the drop port. The form without
 * an argument is deprecated. */
@deprecated("Please use mark_to_drop(standard_metadata) instead.")
extern void mark_to_drop();
@pure
extern void mark_to_drop(inout standard_metadata_t standard_metadata);

/* result = base + (hash(data) mod max); max 0 means no modulo. */
@pure
extern void hash<O, T, D, M>(out O result, in HashAlgorithm algo, in T base, in D data, in M max);

/* Action selector: an action profile whose member is chosen by hashing. */
extern action_selector {
    action_selector(HashAlgorithm algorithm, bit<32> size, bit<32> outputWidth);
}

enum CloneType {
    I2E,
    E2E
}

/* Parser/control checksum helpers. condition false: no check or update. */
extern void verify_checksum<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
@pure
extern void update_checksum<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);
extern void verify_checksum_with_payload<T, O>(in bool condition, in T data, in O checksum, HashAlgorithm algo);
@noSideEffects
extern void update_checksum_with_payload<T, O>(in bool condition, in T data, inout O checksum, HashAlgorithm algo);

/* Clone the packet to session; the clone keeps the user metadata fields tagged @field_list(index). */
extern void clone(in CloneType type, in bit<32> session);
@deprecated("Please use 'resubmit_preserving_field_list' instead")
extern void resubmit<T>(in T data);
extern void resubmit_preserving_field_list(bit<8> index);
@deprecated("Please use 'recirculate_preserving_field_list' instead")
extern void recirculate<T>(in T data);
extern void recirculate_preserving_field_list(bit<8> index);
@deprecated("Please use 'clone_preserving_field_list' instead")
extern void clone3<T>(in CloneType type, in bit<32> session, in T data);
extern void clone_preserving_field_list(in CloneType type, in bit<32> session, bit<8> index);

/* Truncate the outgoing packet to length bytes. */
extern void truncate(in bit<32> length);

/* Debugging aids of bmv2. */
extern void assert(in bool check);
extern void assume(in bool check);
extern void log_msg(string msg);
extern void log_msg<T>(string msg, in T data);

/* The blocks of the v1model pipeline. */
parser Parser<H, M>(packet_in b,
                    out H parsedHdr,
                    inout M meta,
                    inout standard_metadata_t standard_metadata);

control VerifyChecksum<H, M>(inout H hdr,
                             inout M meta);
@pipeline
control Ingress<H, M>(inout H hdr,
                      inout M meta,
                      inout standard_metadata_t standard_metadata);
@pipeline
control Egress<H, M>(inout H hdr,
                     inout M meta,
                     inout standard_metadata_t standard_metadata);

control ComputeChecksum<H, M>(inout H hdr,
                              inout M meta);
@deparser
control Deparser<H>(packet_out b, in H hdr);

package V1Switch<H, M>(Parser<H, M> p,
                       VerifyChecksum<H, M> vr,
                       Ingress<H, M> ig,
                       Egress<H, M> eg,
                       ComputeChecksum<H, M> ck,
                       Deparser<H> dep
                       );

#endif
